import type { ServiceRanges } from '../../rules/index.js';
import type { AllocatedIPSource } from '../allocations/types.js';

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

/** The inputs the server's rules read from the cluster (or from flags). */
export interface ClusterSources {
  readonly ranges: RangeSource;
  /** Undefined when the allocated-IP check is off. */
  readonly allocatedIPs: AllocatedIPSource | undefined;
  close(): Promise<void>;
}
