/**
 * `--output json`: each command writes its own versioned document (check's in
 * docs/ci.md, the audit's in docs/audit.md); this writes any of them.
 */

/** The json format of any report: its document (each command's own schema), indented. */
export function jsonOutput(document: unknown): string {
  return JSON.stringify(document, null, 2) + '\n';
}
