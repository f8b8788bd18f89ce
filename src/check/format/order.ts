/** The order every format reports a file in: by document, then by position; a Gateway's findings in engine order. */
import type { FileReport, GatewayReport, InputError } from '../report.js';

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
