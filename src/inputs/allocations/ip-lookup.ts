/**
 * Allocated ClusterIPs, looked up on demand: one GET per address the rules
 * ask about (a `Cluster` entry with an explicit IP value, new or changed:
 * rare), answered from a small time-bounded cache when asked again soon.
 * Memory is the cache alone, whatever the number of Services in the cluster,
 * and there is no "not synced yet" window: each answer is the API server's
 * current one. docs/dev/decisions.md gives the measurements behind this choice.
 *
 * Failure is bounded and visible: a lookup that gets no usable answer within
 * its deadline leaves the IP "unchecked" (the rule allows the entry with a
 * ClusterAddressAllocationUnchecked warning), the state shows in
 * /readyz?verbose and metrics, and a background probe clears it once the API
 * server answers again.
 */
import type { Logger } from 'pino';
import type { AllocatedIPs } from '../../rules/index.js';
import { AnswerCache, type KnownAllocation } from './ip-answer-cache.js';
import type { GetResult, IPAddressGetter } from './ip-get.js';
import { LookupFetcher } from './ip-lookup-fetch.js';
import { LookupHealth, type LookupError, type LookupState } from './ip-lookup-health.js';
import type { AllocationLookupMetrics } from './ip-lookup-metrics.js';
import { LookupSlots, NO_REQUESTER, type Requester, type SlotRefusal } from './ip-lookup-slots.js';
import type { AllocatedIPSource } from './types.js';

export type { LookupState } from './ip-lookup-health.js';

export interface LookupOptions {
  /**
   * Deadline of one lookup, queueing included. The webhook's own timeout is
   * 5 s and the rules need a few milliseconds: 1 s leaves the apiserver's
   * call ample room even when every lookup of a review waits its full time.
   */
  readonly timeoutMs: number;
  /** How long an answer is reused. Short: an IP freed or taken shows within this time. */
  readonly cacheTtlMs: number;
  /** Cached answers kept at most (least recently used go first). */
  readonly cacheMax: number;
  /** GETs in flight at once; more wait in a queue. */
  readonly concurrency: number;
  /** Lookups waiting at most; beyond, a lookup fails at once rather than pile up. */
  readonly queueMax: number;
  /** Lookups waiting at most for one namespace, and for one user (ip-lookup-slots.ts: the fair share). */
  readonly shareMax: number;
  /**
   * Distinct addresses looked up for one review at most; the rest are
   * answered unchecked. A Gateway has at most 16 addresses (its CRD's
   * maxItems), but the mutating webhook sees objects before the schema does.
   */
  readonly perReviewMax: number;
  /** While the API server fails (or serves no IPAddress API), how often to probe it again, at most (1 s, 2 s, … up to this). */
  readonly probeIntervalMs: number;
  /** Probe at start, so /readyz?verbose says whether lookups work before the first one is needed. */
  readonly probeAtStart: boolean;
  /**
   * While the API server fails, still send each lookup (true: one-shot
   * commands, which have no probe to wait for), or (false, the server) answer
   * "unchecked" at once and leave asking to the probe, whose waits grow: the
   * requests sent during an outage are the probe's few, whatever the review rate.
   */
  readonly askWhileUnavailable: boolean;
}

export const DEFAULT_LOOKUP_OPTIONS: LookupOptions = {
  timeoutMs: 1_000,
  cacheTtlMs: 5_000,
  cacheMax: 1_000,
  concurrency: 4,
  queueMax: 64,
  shareMax: 16,
  perReviewMax: 16,
  probeIntervalMs: 10_000,
  probeAtStart: true,
  askWhileUnavailable: false,
};

/** A name no IPAddress holds in practice (the unspecified address is never allocated); any answer proves access. */
export const PROBE_NAME = '0.0.0.0';

/**
 * Why an address was left unchecked, for the metric: the API server failed
 * (`api-error`) or is known to fail (`api-unavailable`), or a bound of this
 * server refused the lookup (the slot refusals, `review-limit`).
 */
export type UncheckedCause = 'api-error' | 'api-unavailable' | 'review-limit' | SlotRefusal;

type Outcome =
  | KnownAllocation
  | { readonly kind: 'absent' }
  | { readonly kind: 'error'; readonly reason: string; readonly cause: UncheckedCause };

export interface AllocationLookup extends AllocatedIPSource {
  state(): LookupState;
  /** Asks the API server once now (a GET that no address answers); resolves to the state after it. */
  probe(): Promise<LookupState>;
  /** The last failure's few words, while the state is unavailable. */
  lastErrorReason(): string | undefined;
  /** Cached answers now (tests and metrics). */
  cacheSize(): number;
}

export interface AllocationLookupDeps {
  readonly get: IPAddressGetter;
  readonly logger: Logger;
  readonly metrics?: AllocationLookupMetrics | undefined;
  readonly options?: Partial<LookupOptions> | undefined;
  /** Clock (tests). */
  readonly now?: () => number;
}

/** A failed GET as the health state keeps it (with the Retry-After the probe honours). */
function lookupError(result: Extract<GetResult, { kind: 'error' }>): LookupError {
  const { reason, detail, retryAfterMs } = result;
  return { reason, detail, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}

export function createAllocationLookup(deps: AllocationLookupDeps): AllocationLookup {
  const opts = { ...DEFAULT_LOOKUP_OPTIONS, ...deps.options };
  const now = deps.now ?? (() => performance.now());
  const cache = new AnswerCache(opts.cacheTtlMs, opts.cacheMax, now);
  const slots = new LookupSlots(opts.concurrency, opts.queueMax, opts.shareMax);
  const fetcher = new LookupFetcher(deps, opts.timeoutMs, slots, now);
  /**
   * One GET, its outcome recorded in the health state. A lookup this server
   * refused a slot says nothing of the API server: the state is left alone,
   * or one flood would turn the check off for every review.
   */
  const fetchOne = async (
    name: string,
    countAs: 'lookup' | 'probe',
    requester: Requester,
  ): Promise<Outcome> => {
    const result = await fetcher.fetch(name, countAs, requester);
    if (result.kind === 'refused') return { kind: 'error', reason: result.reason, cause: result.why };
    if (result.kind === 'error') {
      if (!health.isClosed) health.set('unavailable', lookupError(result));
      return { kind: 'error', reason: result.reason, cause: 'api-error' };
    }
    health.set(result.kind === 'absent' ? 'absent' : 'ok');
    return result;
  };
  const probe = async (): Promise<void> => {
    if (health.isClosed) return;
    const outcome = await fetchOne(PROBE_NAME, 'probe', NO_REQUESTER);
    health.probed(outcome.kind === 'error' || outcome.kind === 'absent');
  };
  const health = new LookupHealth(
    deps.logger,
    deps.metrics,
    { intervalMs: opts.probeIntervalMs, random: Math.random },
    probe,
  );

  const lookupOne = cachedLookup({ cache, health, opts, metrics: deps.metrics, fetchOne });

  if (opts.probeAtStart) void probe();

  return {
    lookup: async (canonicalIPs, requester = NO_REQUESTER) => {
      const outcomes = await lookupAll(canonicalIPs, opts.perReviewMax, (ip) => lookupOne(ip, requester));
      countUnchecked(outcomes, deps.metrics);
      return answersOf(outcomes);
    },
    describe: () => describeLookup(health, cache, slots, opts),
    state: () => health.state,
    probe: async () => {
      await probe();
      return health.state;
    },
    lastErrorReason: () => (health.state === 'unavailable' ? health.lastError?.reason : undefined),
    cacheSize: () => cache.size,
    close: async () => {
      health.close();
      for (const c of fetcher.controllers) c.abort();
      await Promise.allSettled(lookupOne.pending());
      deps.get.close();
    },
  };
}

/** What one address's lookup needs: the cache, the health state, and the GET. */
interface LookupParts {
  readonly cache: AnswerCache;
  readonly health: LookupHealth;
  readonly opts: LookupOptions;
  readonly metrics: AllocationLookupMetrics | undefined;
  readonly fetchOne: (name: string, countAs: 'lookup', requester: Requester) => Promise<Outcome>;
}

/**
 * One address: from the cache, or answered without asking during an
 * outage, or one GET shared by the reviews that ask at the same time.
 */
function cachedLookup(parts: LookupParts) {
  const { cache, health, opts, metrics, fetchOne } = parts;
  const inFlight = new Map<string, { readonly outcome: Promise<Outcome>; readonly requester: Requester }>();
  const lookupOne = (ip: string, requester: Requester): Promise<Outcome> | Outcome => {
    const hit = cache.get(ip);
    if (hit) {
      metrics?.cacheHits.inc();
      return hit;
    }
    const without = answerWithoutAsking(health, opts);
    if (without) return without;
    const pending = inFlight.get(ip);
    if (pending) return sharedOutcome(pending, requester, () => fetchOne(ip, 'lookup', requester));
    const outcome = fetchOne(ip, 'lookup', requester).then((o) => {
      inFlight.delete(ip);
      if (o.kind === 'held' || o.kind === 'free') cache.set(ip, o);
      return o;
    });
    inFlight.set(ip, { outcome, requester });
    return outcome;
  };
  return Object.assign(lookupOne, { pending: () => [...inFlight.values()].map((p) => p.outcome) });
}

/**
 * While the API is known to be absent, or (the server) known to fail, ask
 * nothing: the probe, whose waits grow, finds out when it answers again.
 */
function answerWithoutAsking(health: LookupHealth, opts: LookupOptions): Outcome | undefined {
  if (health.state === 'absent') return { kind: 'absent' };
  if (health.state === 'unavailable' && !opts.askWhileUnavailable)
    return {
      kind: 'error',
      reason: health.lastError?.reason ?? 'API server unavailable',
      cause: 'api-unavailable',
    };
  return undefined;
}

/**
 * Another review's GET of the same address, shared; when this server refused
 * that one a slot (its requester's share, say), the refusal is the other
 * requester's, not this one's: this requester then asks for itself.
 */
async function sharedOutcome(
  pending: { readonly outcome: Promise<Outcome>; readonly requester: Requester },
  requester: Requester,
  askOwn: () => Promise<Outcome>,
): Promise<Outcome> {
  const outcome = await pending.outcome;
  const refusedHere =
    outcome.kind === 'error' && outcome.cause !== 'api-error' && outcome.cause !== 'api-unavailable';
  const same =
    pending.requester.namespace === requester.namespace && pending.requester.user === requester.user;
  return refusedHere && !same ? askOwn() : outcome;
}

/** Each distinct address once, all at the same time; past `max` of them, the rest unchecked. */
async function lookupAll(
  canonicalIPs: readonly string[],
  max: number,
  lookupOne: (ip: string) => Promise<Outcome> | Outcome,
): Promise<Map<string, Outcome>> {
  const outcomes = new Map<string, Outcome>();
  const distinct = [...new Set(canonicalIPs)];
  for (const ip of distinct.slice(max))
    outcomes.set(ip, {
      kind: 'error',
      reason: `more than ${max} addresses to look up in one review`,
      cause: 'review-limit',
    });
  await Promise.all(
    distinct.slice(0, max).map(async (ip) => {
      outcomes.set(ip, await lookupOne(ip));
    }),
  );
  return outcomes;
}

/** One count per review and cause that left an address unchecked. */
function countUnchecked(
  outcomes: ReadonlyMap<string, Outcome>,
  metrics: AllocationLookupMetrics | undefined,
): void {
  if (!metrics) return;
  const causes = new Set<UncheckedCause>();
  for (const o of outcomes.values()) if (o.kind === 'error') causes.add(o.cause);
  for (const reason of causes) metrics.uncheckedReviews.inc({ reason });
}

/** The rules' view of a review's lookups. */
function answersOf(outcomes: ReadonlyMap<string, Outcome>): AllocatedIPs {
  return {
    holderOf: (ip) => {
      const o = outcomes.get(ip);
      return o?.kind === 'held' ? o.holder : undefined;
    },
    uncheckedReason: (ip) => {
      const o = outcomes.get(ip);
      // Asked but not prefetched would be a bug in the caller: say so rather than pass silently.
      if (o === undefined) return 'not looked up';
      return o.kind === 'error' ? o.reason : undefined;
    },
  };
}

/** For /readyz?verbose. */
function describeLookup(
  health: LookupHealth,
  cache: AnswerCache,
  slots: LookupSlots,
  opts: LookupOptions,
): Readonly<Record<string, unknown>> {
  const state = health.state;
  return {
    mode: 'on-demand lookups (GET ipaddresses/<ip>)',
    state,
    ...(state === 'unavailable' ? { effect: 'Cluster addresses allowed unchecked, with a warning' } : {}),
    ...(state === 'absent'
      ? { effect: 'the cluster serves no IPAddress API: ClusterAddressAllocated skipped' }
      : {}),
    ...(health.lastError ? { lastError: health.lastError } : {}),
    ...(health.lastSuccess ? { lastSuccess: health.lastSuccess } : {}),
    cache: cache.describe(),
    inFlight: slots.inFlight,
    queued: slots.queued,
    timeoutSeconds: opts.timeoutMs / 1000,
  };
}
