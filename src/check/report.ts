/**
 * The result of a check, independent of how it is printed: every output
 * format renders this one model, so they cannot disagree on what was found.
 */
import { EXIT_OK, EXIT_USAGE, EXIT_VIOLATIONS } from '../io.js';
import type { JudgedFinding } from '../findings/evaluate.js';
import { plural, type InputProblem, type Position } from '../findings/lines.js';
import type { GepRevision } from '../rules/index.js';

/** A judged finding placed in its manifest. */
export interface CheckFinding extends JudgedFinding {
  readonly position: Position;
}

export interface GatewayReport {
  readonly file: string;
  /** 1-based document number in the file. */
  readonly document: number;
  /** Indices into `items` of enclosing Lists; empty for a top-level Gateway. */
  readonly itemPath: readonly number[];
  readonly apiVersion: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly position: Position;
  readonly findings: readonly CheckFinding[];
}

export type InputErrorCode = 'UnreadableInput' | 'InvalidYAML' | 'NotAnObject' | 'CheckFailed';

/** Input that could not be checked: any of these makes the exit code 2. */
export interface InputError extends InputProblem {
  readonly code: InputErrorCode;
  readonly file: string;
  /** 1-based document number; undefined for errors about the whole file. */
  readonly document: number | undefined;
  readonly position: Position | undefined;
}

export interface FileReport {
  readonly path: string;
  /** False when the file (or folder) could not be read at all. */
  readonly read: boolean;
  readonly gateways: readonly GatewayReport[];
  readonly errors: readonly InputError[];
  /** Objects that are not Gateways (List items included). */
  readonly skipped: number;
  /** Documents with no content (`---` alone, comments only, `null`). */
  readonly empty: number;
}

export interface CheckSettings {
  /** The GEP-5093 revision the rules followed. */
  readonly gepRevision: GepRevision;
  /** flag: --gep-revision; cluster: the Gateway CRD (--from-cluster, auto); default: auto offline. */
  readonly gepRevisionFrom: 'flag' | 'cluster' | 'default';
  readonly rangesFrom: 'flag' | 'cluster';
  readonly serviceCidrs: readonly string[];
  readonly clusterDomain: string;
  readonly specPolicy: string;
  readonly statusPolicy: string;
  readonly allowedRoutability: readonly string[] | undefined;
  readonly allocatedIPs: boolean;
}

export interface CheckReport {
  readonly settings: CheckSettings;
  readonly files: readonly FileReport[];
}

export interface Summary {
  /** Files that were read (unreadable ones are counted in `inputErrors`). */
  readonly files: number;
  readonly gateways: number;
  readonly violations: number;
  readonly warnings: number;
  readonly skipped: number;
  readonly empty: number;
  readonly inputErrors: number;
  readonly exitCode: typeof EXIT_OK | typeof EXIT_VIOLATIONS | typeof EXIT_USAGE;
}

/** `--fail-on`: violations fail the check (exit 1), or warnings too. */
export function summarize(report: CheckReport, failOn: 'violation' | 'warning' = 'violation'): Summary {
  let files = 0;
  let gateways = 0;
  let violations = 0;
  let warnings = 0;
  let skipped = 0;
  let empty = 0;
  let inputErrors = 0;
  for (const file of report.files) {
    if (file.read) files++;
    gateways += file.gateways.length;
    skipped += file.skipped;
    empty += file.empty;
    inputErrors += file.errors.length;
    for (const g of file.gateways)
      for (const f of g.findings) {
        if (f.severity === 'violation') violations++;
        else warnings++;
      }
  }
  const failing = violations + (failOn === 'warning' ? warnings : 0);
  const exitCode = inputErrors > 0 ? EXIT_USAGE : failing > 0 ? EXIT_VIOLATIONS : EXIT_OK;
  return { files, gateways, violations, warnings, skipped, empty, inputErrors, exitCode };
}

/** `checked 9 Gateways in 7 files: 4 violations, 3 warnings; skipped 6 other documents (1 empty); 2 input errors` */
export function summaryLine(s: Summary): string {
  let line = `checked ${plural(s.gateways, 'Gateway')} in ${plural(s.files, 'file')}: ${plural(s.violations, 'violation')}, ${plural(s.warnings, 'warning')}`;
  const other = s.skipped + s.empty;
  if (other > 0)
    line += `; skipped ${plural(other, 'other document')}${s.empty > 0 ? ` (${s.empty} empty)` : ''}`;
  if (s.inputErrors > 0) line += `; ${plural(s.inputErrors, 'input error')}`;
  return line;
}
