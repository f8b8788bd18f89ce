import type { GepRevision } from '../../rules/index.js';

/** The revision the rules use, and whether it is known. */
export interface RevisionSource {
  /** The revision in force; undefined while unknown (the server is then not ready). */
  current(): GepRevision | undefined;
  /** Ready, or the one-line reason why not (for /readyz). */
  readiness(): { readonly ready: boolean; readonly reason?: string };
  /** Detail for /readyz?verbose: setting, revision in force, what the CRD carries. */
  describe(): Readonly<Record<string, unknown>>;
  /** Calls `listener` when the revision in force changes; absent for a revision that never changes. */
  onChange?(listener: () => void): () => void;
  close(): Promise<void>;
}
