/**
 * `--output github`: GitHub Actions workflow commands, which the runner turns
 * into annotations on the changed lines: `::error file=…,line=…,col=…,title=<code>::<message>`.
 * A line without a place (the audit's) is an annotation of the run.
 */
import { STDIN_DISPLAY, type Position, type ReportLine } from './lines.js';

/** The message part: `%`, CR and LF are escaped (actions/toolkit escapeData). */
export function escapeData(text: string): string {
  return text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}

/** Property values: additionally `:` and `,`, which separate properties (escapeProperty). */
export function escapeProperty(text: string): string {
  return escapeData(text).replaceAll(':', '%3A').replaceAll(',', '%2C');
}

interface Annotation {
  readonly file: string | undefined;
  readonly position: Position | undefined;
  readonly title: string;
  readonly message: string;
}

function command(level: 'error' | 'warning', { file, position, title, message }: Annotation): string {
  const props: string[] = [];
  // Standard input has no file to annotate: the annotation then belongs to the run.
  if (file !== undefined && file !== STDIN_DISPLAY) props.push(`file=${escapeProperty(file)}`);
  if (position) props.push(`line=${position.line}`, `col=${position.column}`);
  props.push(`title=${escapeProperty(title)}`);
  return `::${level} ${props.join(',')}::${escapeData(message)}`;
}

/** The github format of any report: a command per line, then its summary line. */
export function githubOutput(report: Iterable<ReportLine>, summary: string): string {
  const lines: string[] = [];
  for (const line of report) {
    if (line.kind === 'error') {
      const e = line.error;
      lines.push(command('error', { file: e.file, position: e.position, title: e.code, message: e.message }));
      continue;
    }
    const f = line.finding;
    lines.push(
      command(f.severity === 'violation' ? 'error' : 'warning', {
        file: line.file,
        position: f.position,
        title: f.code,
        message: `${line.label}: ${f.message}`,
      }),
    );
  }
  lines.push(summary);
  return lines.join('\n') + '\n';
}
