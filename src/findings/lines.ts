/**
 * The line model every writer renders: a finding of a Gateway (with its place
 * in a file when it came from one: `check` knows the file and position, the
 * audit knows neither), or an input that could not be checked; and the words
 * the writers share (a Gateway's label, counts).
 */
import type { JudgedFinding } from './evaluate.js';

/** The `--output` values every report is written in (check and audit alike). */
export const OUTPUT_FORMATS = ['text', 'json', 'github', 'junit', 'sarif'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** A 1-based line and column, as editors and CI annotations count them. */
export interface Position {
  readonly line: number;
  readonly column: number;
}

/** The display path of standard input (`-f -`): no file a consumer could open. */
export const STDIN_DISPLAY = '<stdin>';

/** An input that could not be checked: its code, the display path and, when known, where. */
export interface InputProblem {
  readonly code: string;
  readonly file: string;
  readonly position: Position | undefined;
  readonly message: string;
}

/** A finding, with where it is when the caller knows (check: its position in the manifest). */
export type PlacedFinding = JudgedFinding & { readonly position?: Position };

/**
 * One line of the line formats (text, github): an input that could not be
 * checked, or a finding of a Gateway with where it is, when it has a place.
 */
export type ReportLine =
  | { readonly kind: 'error'; readonly error: InputProblem }
  | {
      readonly kind: 'finding';
      /** `Gateway apps/gw`. */
      readonly label: string;
      readonly file?: string;
      readonly finding: PlacedFinding;
    };

/** Names as written when printable, quoted otherwise, so a hostile name cannot break a line of output. */
function printable(text: string): string {
  return /^[\x21-\x7e]+$/.test(text) ? text : JSON.stringify(text);
}

/** `Gateway apps/gw`; a Gateway without a namespace is shown by name alone. */
export function gatewayLabel(g: {
  readonly namespace: string | undefined;
  readonly name: string | undefined;
}): string {
  const name = g.name === undefined ? '<unnamed>' : printable(g.name);
  return `Gateway ${g.namespace ? `${printable(g.namespace)}/${name}` : name}`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
