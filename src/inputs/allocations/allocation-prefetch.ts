/**
 * Lets the pure, synchronous rules use allocations that are learnt by I/O.
 * The rules run once with a recorder as their AllocatedIPs: it answers
 * "free" and notes every IP asked about. Only the rules know which entries
 * need the check (a new or changed `Cluster` entry with an IP inside a usable
 * range, not reserved), so nothing here repeats that logic. When they asked
 * nothing — nearly every review — the first answer stands, synchronously.
 * Otherwise the asked IPs are looked up and the rules run again with the
 * answers. No Kubernetes client is imported here: the HTTP layer loads it.
 */
import type { AllocatedIPs, RuleContext } from '../../rules/index.js';
import type { Requester } from './ip-lookup-slots.js';
import type { AllocatedIPSource } from './types.js';

export interface AllocationPrefetch {
  /** The AllocatedIPs to put in the RuleContext the first pass uses. */
  readonly recorder: AllocatedIPs;
  /**
   * `run(ctx)` once; when the rules asked about allocations, looks them up
   * and resolves to `run` with them. `run` must be synchronous. `requesterOf`
   * names who the lookups are for (the review's namespace and user, from the
   * first answer), so that they get that requester's fair share.
   */
  decide<T>(
    ctx: RuleContext,
    run: (ctx: RuleContext) => T,
    requesterOf?: (first: T) => Requester | undefined,
  ): T | Promise<T>;
}

export function allocationPrefetch(source: AllocatedIPSource): AllocationPrefetch {
  // One recorder, reset per decision: `run` is synchronous, so decisions never interleave.
  const asked = new Set<string>();
  const recorder: AllocatedIPs = {
    holderOf(canonicalIP) {
      asked.add(canonicalIP);
      return undefined;
    },
  };
  return {
    recorder,
    decide(ctx, run, requesterOf) {
      asked.clear();
      const first = run(ctx.allocatedIPs === recorder ? ctx : { ...ctx, allocatedIPs: recorder });
      if (asked.size === 0) return first;
      const ips = [...asked];
      asked.clear();
      return source.lookup(ips, requesterOf?.(first)).then((allocatedIPs) => run({ ...ctx, allocatedIPs }));
    },
  };
}
