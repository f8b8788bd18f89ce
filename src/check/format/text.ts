/**
 * `--output text`: one line per finding, `file:line:col: Gateway ns/name: <message>`,
 * warnings marked `warning:`, input problems `error:`, then the summary.
 */
import { gatewayLabel, summaryLine, type CheckReport, type InputError, type Summary } from '../report.js';
import type { Position } from '../source.js';
import { fileEntries } from './order.js';

function at(file: string, position: Position | undefined): string {
  return position ? `${file}:${position.line}:${position.column}` : file;
}

export function inputErrorLine(error: InputError): string {
  return `${at(error.file, error.position)}: error: ${error.message}`;
}

export function formatText(report: CheckReport, summary: Summary): string {
  const lines: string[] = [];
  for (const file of report.files) {
    for (const entry of fileEntries(file)) {
      if (entry.kind === 'error') {
        lines.push(inputErrorLine(entry.error));
        continue;
      }
      const g = entry.gateway;
      for (const f of g.findings) {
        const mark = f.severity === 'warning' ? 'warning: ' : '';
        lines.push(`${at(g.file, f.position)}: ${mark}${gatewayLabel(g)}: ${f.message}`);
      }
    }
  }
  lines.push(summaryLine(summary));
  return lines.join('\n') + '\n';
}
