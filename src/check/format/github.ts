/**
 * `--output github`: GitHub Actions workflow commands, which the runner turns
 * into annotations on the changed lines: `::error file=…,line=…,col=…,title=<code>::<message>`.
 */
import { STDIN_DISPLAY } from '../inputs.js';
import { gatewayLabel, summaryLine, type CheckReport, type Summary } from '../report.js';
import type { Position } from '../source.js';
import { fileEntries } from './order.js';

/** The message part: `%`, CR and LF are escaped (actions/toolkit escapeData). */
export function escapeData(text: string): string {
  return text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}

/** Property values: additionally `:` and `,`, which separate properties (escapeProperty). */
export function escapeProperty(text: string): string {
  return escapeData(text).replaceAll(':', '%3A').replaceAll(',', '%2C');
}

interface Annotation {
  readonly file: string;
  readonly position: Position | undefined;
  readonly title: string;
  readonly message: string;
}

function command(level: 'error' | 'warning', { file, position, title, message }: Annotation): string {
  const props: string[] = [];
  // Standard input has no file to annotate: the annotation then belongs to the run.
  if (file !== STDIN_DISPLAY) props.push(`file=${escapeProperty(file)}`);
  if (position) props.push(`line=${position.line}`, `col=${position.column}`);
  props.push(`title=${escapeProperty(title)}`);
  return `::${level} ${props.join(',')}::${escapeData(message)}`;
}

export function formatGithub(report: CheckReport, summary: Summary): string {
  const lines: string[] = [];
  for (const file of report.files) {
    for (const entry of fileEntries(file)) {
      if (entry.kind === 'error') {
        const e = entry.error;
        lines.push(
          command('error', { file: e.file, position: e.position, title: e.code, message: e.message }),
        );
        continue;
      }
      const g = entry.gateway;
      for (const f of g.findings) {
        const level = f.severity === 'violation' ? 'error' : 'warning';
        lines.push(
          command(level, {
            file: g.file,
            position: f.position,
            title: f.code,
            message: `${gatewayLabel(g)}: ${f.message}`,
          }),
        );
      }
    }
  }
  lines.push(summaryLine(summary));
  return lines.join('\n') + '\n';
}
