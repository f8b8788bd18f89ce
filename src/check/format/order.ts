/** The order every format reports a file in: by document, then by position; a Gateway's findings in engine order. */
import type { JudgedFinding } from '../evaluate.js';
import {
  gatewayLabel,
  type CheckReport,
  type FileReport,
  type GatewayReport,
  type InputError,
} from '../report.js';
import type { Position } from '../source.js';

export type FileEntry =
  | { readonly kind: 'gateway'; readonly gateway: GatewayReport }
  | { readonly kind: 'error'; readonly error: InputError };

function key(entry: FileEntry): [number, number, number] {
  const document = entry.kind === 'gateway' ? entry.gateway.document : (entry.error.document ?? 0);
  const p = entry.kind === 'gateway' ? entry.gateway.position : entry.error.position;
  return [document, p?.line ?? 0, p?.column ?? 0];
}

export function fileEntries(file: FileReport): FileEntry[] {
  const entries: FileEntry[] = [
    ...file.errors.map((error): FileEntry => ({ kind: 'error', error })),
    ...file.gateways.map((gateway): FileEntry => ({ kind: 'gateway', gateway })),
  ];
  // Array.prototype.sort is stable: equal keys keep their order of discovery.
  return entries.sort((a, b) => {
    const [da, la, ca] = key(a);
    const [db, lb, cb] = key(b);
    return da - db || la - lb || ca - cb;
  });
}

/**
 * One line of the line formats (text, github): an input that could not be
 * checked, or a finding of a Gateway with where it is, when it has a place
 * (`check` knows the file and position; the audit knows neither).
 */
export type ReportLine =
  | { readonly kind: 'error'; readonly error: InputError }
  | {
      readonly kind: 'finding';
      /** `Gateway apps/gw`. */
      readonly label: string;
      readonly file?: string;
      readonly finding: JudgedFinding & { readonly position?: Position };
    };

/** A check report's lines, file by file in report order. */
export function* checkLines(report: CheckReport): Generator<ReportLine> {
  for (const file of report.files)
    for (const entry of fileEntries(file)) {
      if (entry.kind === 'error') {
        yield entry;
        continue;
      }
      const g = entry.gateway;
      const label = gatewayLabel(g);
      for (const finding of g.findings) yield { kind: 'finding', label, file: g.file, finding };
    }
}
