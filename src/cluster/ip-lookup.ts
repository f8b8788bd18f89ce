/**
 * Allocated ClusterIPs, looked up on demand: one GET per address the rules
 * ask about (a `Cluster` entry with an explicit IP value, new or changed:
 * rare), answered from a small time-bounded cache when asked again soon.
 * Memory is the cache alone, whatever the number of Services in the cluster,
 * and there is no "not synced yet" window: each answer is the API server's
 * current one. docs/decisions.md gives the measurements behind this choice.
 *
 * Failure is bounded and visible: a lookup that gets no usable answer within
 * its deadline leaves the IP "unchecked" (the rule allows the entry with a
 * ClusterAddressAllocationUnchecked warning), the state shows in
 * /readyz?verbose and metrics, and a background probe clears it once the API
 * server answers again.
 */
import type { Logger } from 'pino';
import { describeKubeError } from '../kube/errors.js';
import type { AllocatedIPs } from '../rules/index.js';
import { AnswerCache, type KnownAllocation } from './ip-answer-cache.js';
import type { GetResult, IPAddressGetter } from './ip-get.js';
import { LookupHealth, type LookupError, type LookupState } from './ip-lookup-health.js';
import type { AllocationLookupMetrics } from './ip-lookup-metrics.js';
import { LookupSlots } from './ip-lookup-slots.js';
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
  probeIntervalMs: 10_000,
  probeAtStart: true,
  askWhileUnavailable: false,
};

/** A name no IPAddress holds in practice (the unspecified address is never allocated); any answer proves access. */
export const PROBE_NAME = '0.0.0.0';

type Outcome =
  KnownAllocation | { readonly kind: 'absent' } | { readonly kind: 'error'; readonly reason: string };

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

/**
 * One GET of an address, within the deadline and a lookup slot; never
 * rejects: every failure becomes an `error` outcome with a few words for the
 * warning and the detail for the log.
 */
class LookupFetcher {
  readonly controllers = new Set<AbortController>();
  private readonly timeoutText: string;

  constructor(
    private readonly deps: AllocationLookupDeps,
    private readonly opts: LookupOptions,
    private readonly slots: LookupSlots,
    private readonly now: () => number,
  ) {
    this.timeoutText = `no answer from the API server within ${opts.timeoutMs / 1000} s`;
  }

  async fetch(name: string, countAs: 'lookup' | 'probe'): Promise<GetResult> {
    const controller = new AbortController();
    this.controllers.add(controller);
    const timer = setTimeout(() => controller.abort(), this.opts.timeoutMs);
    const started = this.now();
    let result: GetResult;
    try {
      result = await this.withSlot(name, controller.signal);
    } finally {
      clearTimeout(timer);
      this.controllers.delete(controller);
    }
    this.deps.metrics?.duration.observe((this.now() - started) / 1000);
    this.deps.metrics?.requests.inc({ kind: countAs, result: result.kind });
    return result;
  }

  private async withSlot(name: string, signal: AbortSignal): Promise<GetResult> {
    if (!(await this.slots.acquire(signal)))
      return signal.aborted
        ? { kind: 'error', reason: this.timeoutText, detail: 'waited for a free lookup slot' }
        : {
            kind: 'error',
            reason: 'too many allocated-IP lookups waiting',
            detail: `queue of ${this.opts.queueMax} full`,
          };
    try {
      return await this.deps.get.get(name, signal);
    } catch (err) {
      return signal.aborted
        ? { kind: 'error', reason: this.timeoutText, detail: `GET ipaddresses/${name} timed out` }
        : { kind: 'error', reason: unreachable(err), detail: describeKubeError(err) };
    } finally {
      this.slots.release();
    }
  }
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
  const slots = new LookupSlots(opts.concurrency, opts.queueMax);
  const fetcher = new LookupFetcher(deps, opts, slots, now);
  const inFlight = new Map<string, Promise<Outcome>>();

  /** One GET, its outcome recorded in the health state. */
  const fetchOne = async (name: string, countAs: 'lookup' | 'probe'): Promise<Outcome> => {
    const result = await fetcher.fetch(name, countAs);
    if (result.kind === 'error') {
      if (!health.isClosed) health.set('unavailable', lookupError(result));
      return { kind: 'error', reason: result.reason };
    }
    health.set(result.kind === 'absent' ? 'absent' : 'ok');
    return result;
  };
  const probe = async (): Promise<void> => {
    if (health.isClosed) return;
    const outcome = await fetchOne(PROBE_NAME, 'probe');
    health.probed(outcome.kind === 'error' || outcome.kind === 'absent');
  };
  const health = new LookupHealth(deps.logger, deps.metrics, opts.probeIntervalMs, probe);

  const lookupOne = (ip: string): Promise<Outcome> | Outcome => {
    const hit = cache.get(ip);
    if (hit) {
      deps.metrics?.cacheHits.inc();
      return hit;
    }
    const without = answerWithoutAsking(health, opts);
    if (without) return without;
    let pending = inFlight.get(ip);
    if (!pending) {
      pending = fetchOne(ip, 'lookup').then((outcome) => {
        inFlight.delete(ip);
        if (outcome.kind === 'held' || outcome.kind === 'free') cache.set(ip, outcome);
        return outcome;
      });
      inFlight.set(ip, pending);
    }
    return pending;
  };

  if (opts.probeAtStart) void probe();

  return {
    lookup: async (canonicalIPs) => answersOf(await lookupAll(canonicalIPs, lookupOne)),
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
      await Promise.allSettled([...inFlight.values()]);
      deps.get.close();
    },
  };
}

/**
 * While the API is known to be absent, or (the server) known to fail, ask
 * nothing: the probe, whose waits grow, finds out when it answers again.
 */
function answerWithoutAsking(health: LookupHealth, opts: LookupOptions): Outcome | undefined {
  if (health.state === 'absent') return { kind: 'absent' };
  if (health.state === 'unavailable' && !opts.askWhileUnavailable)
    return { kind: 'error', reason: health.lastError?.reason ?? 'API server unavailable' };
  return undefined;
}

/** Each distinct address once, all at the same time. */
async function lookupAll(
  canonicalIPs: readonly string[],
  lookupOne: (ip: string) => Promise<Outcome> | Outcome,
): Promise<Map<string, Outcome>> {
  const outcomes = new Map<string, Outcome>();
  await Promise.all(
    [...new Set(canonicalIPs)].map(async (ip) => {
      outcomes.set(ip, await lookupOne(ip));
    }),
  );
  return outcomes;
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

function unreachable(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? `API server unreachable (${code})` : 'API server unreachable';
}
