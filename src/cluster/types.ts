import type { AllocatedIPs } from '../rules/index.js';
import type { Requester } from './ip-lookup-slots.js';
import type { GepRevision, ServiceRanges } from '../rules/index.js';

/** Where the live service ranges come from, and whether they are known. */
export interface RangeSource {
  /** The ranges in force now; undefined while unknown (the server is then not ready). */
  current(): ServiceRanges | undefined;
  /** Ready, or the one-line reason why not (shown in /readyz and logs). */
  readiness(): { readonly ready: boolean; readonly reason?: string };
  /** Detail for /readyz?verbose: source, ranges, watch health. */
  describe(): Readonly<Record<string, unknown>>;
  /** Calls `listener` when the ranges in force change; absent for ranges that never change. */
  onChange?(listener: () => void): () => void;
  close(): Promise<void>;
}

/** Where the holders of allocated ClusterIPs are learnt, a few addresses at a time. */
export interface AllocatedIPSource {
  /**
   * The holders of these canonical IPs, asked of the cluster now (or a recent
   * answer). Resolves within a bounded time and never rejects: an address
   * whose holder could not be learnt carries an uncheckedReason. `requester`
   * (the review's namespace and user) gets its fair share of the lookups;
   * absent: the server's own (audit, one-shot commands).
   */
  lookup(canonicalIPs: readonly string[], requester?: Requester): Promise<AllocatedIPs>;
  /** Detail for /readyz?verbose: state, last error, cache. */
  describe(): Readonly<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The inputs the server's rules read from the cluster (or from flags). */
export interface ClusterSources {
  readonly ranges: RangeSource;
  /** Undefined when the allocated-IP check is off. */
  readonly allocatedIPs: AllocatedIPSource | undefined;
  close(): Promise<void>;
}

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
