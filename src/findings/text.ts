/**
 * `--output text`: one line per finding, `file:line:col: Gateway ns/name: <message>`
 * (the audit's lines have no place), warnings marked `warning:`, input
 * problems `error:`, then the summary.
 */
import type { InputProblem, Position, ReportLine } from './lines.js';

function at(file: string, position: Position | undefined): string {
  return position ? `${file}:${position.line}:${position.column}` : file;
}

export function inputErrorLine(error: InputProblem): string {
  return `${at(error.file, error.position)}: error: ${error.message}`;
}

/** The text format of any report: its lines, then its summary line. */
export function textOutput(report: Iterable<ReportLine>, summary: string): string {
  const lines: string[] = [];
  for (const line of report) {
    if (line.kind === 'error') {
      lines.push(inputErrorLine(line.error));
      continue;
    }
    const f = line.finding;
    const where = line.file === undefined ? '' : `${at(line.file, f.position)}: `;
    lines.push(`${where}${f.severity === 'warning' ? 'warning: ' : ''}${line.label}: ${f.message}`);
  }
  lines.push(summary);
  return lines.join('\n') + '\n';
}
