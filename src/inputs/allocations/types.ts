import type { AllocatedIPs } from '../../rules/index.js';
import type { Requester } from './ip-lookup-slots.js';

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
