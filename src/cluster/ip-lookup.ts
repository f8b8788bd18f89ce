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
import type { AllocatedIPs, IPAddressHolder } from '../rules/index.js';
import type { GetResult, IPAddressGetter } from './ip-get.js';
import type { AllocationLookupMetrics } from './ip-lookup-metrics.js';
import type { AllocatedIPSource } from './types.js';

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
}

export const DEFAULT_LOOKUP_OPTIONS: LookupOptions = {
  timeoutMs: 1_000,
  cacheTtlMs: 5_000,
  cacheMax: 1_000,
  concurrency: 4,
  queueMax: 64,
  probeIntervalMs: 30_000,
  probeAtStart: true,
};

/** A name no IPAddress holds in practice (the unspecified address is never allocated); any answer proves access. */
export const PROBE_NAME = '0.0.0.0';

type Known = { readonly kind: 'held'; readonly holder: IPAddressHolder } | { readonly kind: 'free' };
type Outcome = Known | { readonly kind: 'absent' } | { readonly kind: 'error'; readonly reason: string };

export type LookupState =
  /** Nothing asked yet, probe pending. */
  | 'unknown'
  | 'ok'
  /** The last lookup or probe failed: Cluster IPs are allowed unchecked, with a warning. */
  | 'unavailable'
  /** The cluster serves no IPAddress API: the rule is skipped. */
  | 'absent';

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

export function createAllocationLookup(deps: AllocationLookupDeps): AllocationLookup {
  const opts = { ...DEFAULT_LOOKUP_OPTIONS, ...deps.options };
  const now = deps.now ?? (() => performance.now());
  const { logger, metrics } = deps;
  const timeoutText = `no answer from the API server within ${opts.timeoutMs / 1000} s`;

  const cache = new Map<string, { readonly answer: Known; readonly expires: number }>();
  const inFlight = new Map<string, Promise<Outcome>>();
  const waiting: (() => void)[] = [];
  let active = 0;
  let closed = false;

  let state: LookupState = 'unknown';
  let lastError: { reason: string; detail: string; since: string } | undefined;
  let lastSuccess: string | undefined;
  let probeTimer: NodeJS.Timeout | undefined;
  let failedProbes = 0;
  const controllers = new Set<AbortController>();

  const setState = (next: LookupState, error?: { reason: string; detail: string }): void => {
    const previous = state;
    state = next;
    metrics?.up.set(next === 'ok' ? 1 : 0);
    if (next === 'ok') lastSuccess = new Date().toISOString();
    if (error)
      lastError = {
        ...error,
        since: previous === 'unavailable' && lastError ? lastError.since : new Date().toISOString(),
      };
    if (next !== previous) {
      if (next === 'unavailable')
        logger.warn(
          { reason: error?.reason, detail: error?.detail },
          'allocated-IP lookups fail: Cluster addresses are allowed unchecked, with a warning, until the API server answers',
        );
      else if (next === 'absent')
        logger.warn(
          'the cluster serves no IPAddress API (networking.k8s.io/v1, Kubernetes 1.33+): the ClusterAddressAllocated rule is skipped',
        );
      else if (next === 'ok' && previous !== 'unknown') logger.info('allocated-IP lookups answer again');
    }
    if (next === 'ok') lastError = undefined;
    scheduleProbe();
  };

  const scheduleProbe = (): void => {
    if (closed || probeTimer || (state !== 'unavailable' && state !== 'absent')) return;
    // Soon after a first failure (a start-up on a busy node can miss the deadline), then less often.
    const delay = Math.min(opts.probeIntervalMs, 1_000 * 2 ** Math.max(0, failedProbes - 1));
    probeTimer = setTimeout(() => {
      probeTimer = undefined;
      void probe();
    }, delay);
    probeTimer.unref();
  };

  /** Waits for a free slot, or gives up when the queue is full or the deadline passes. */
  const acquire = (signal: AbortSignal): Promise<boolean> => {
    if (active < opts.concurrency) {
      active++;
      return Promise.resolve(true);
    }
    if (waiting.length >= opts.queueMax) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const go = (): void => {
        signal.removeEventListener('abort', giveUp);
        active++;
        resolve(true);
      };
      const giveUp = (): void => {
        const i = waiting.indexOf(go);
        if (i >= 0) waiting.splice(i, 1);
        resolve(false);
      };
      waiting.push(go);
      signal.addEventListener('abort', giveUp, { once: true });
    });
  };
  const release = (): void => {
    active--;
    const next = waiting.shift();
    if (next) next();
  };

  /** One GET with a deadline; never rejects. */
  const fetchOne = async (name: string, countAs: 'lookup' | 'probe'): Promise<Outcome> => {
    const controller = new AbortController();
    controllers.add(controller);
    const timer = setTimeout(() => controller.abort(), opts.timeoutMs);
    const started = now();
    let result: GetResult;
    try {
      if (!(await acquire(controller.signal))) {
        result = controller.signal.aborted
          ? { kind: 'error', reason: timeoutText, detail: 'waited for a free lookup slot' }
          : {
              kind: 'error',
              reason: 'too many allocated-IP lookups waiting',
              detail: `queue of ${opts.queueMax} full`,
            };
      } else {
        try {
          result = await deps.get.get(name, controller.signal);
        } catch (err) {
          result = controller.signal.aborted
            ? { kind: 'error', reason: timeoutText, detail: `GET ipaddresses/${name} timed out` }
            : { kind: 'error', reason: unreachable(err), detail: oneLine(err) };
        } finally {
          release();
        }
      }
    } finally {
      clearTimeout(timer);
      controllers.delete(controller);
    }
    metrics?.duration.observe((now() - started) / 1000);
    metrics?.requests.inc({ kind: countAs, result: result.kind });
    if (result.kind === 'error') {
      if (!closed) setState('unavailable', { reason: result.reason, detail: result.detail });
      return { kind: 'error', reason: result.reason };
    }
    if (result.kind === 'absent') {
      setState('absent');
      return result;
    }
    setState('ok');
    return result;
  };

  const probe = async (): Promise<void> => {
    if (closed) return;
    const outcome = await fetchOne(PROBE_NAME, 'probe');
    failedProbes = outcome.kind === 'error' || outcome.kind === 'absent' ? failedProbes + 1 : 0;
    scheduleProbe();
  };

  const cached = (ip: string): Known | undefined => {
    const hit = cache.get(ip);
    if (!hit) return undefined;
    cache.delete(ip);
    if (hit.expires <= now()) return undefined;
    cache.set(ip, hit); // most recently used goes last
    return hit.answer;
  };

  const remember = (ip: string, answer: Known): void => {
    cache.delete(ip);
    cache.set(ip, { answer, expires: now() + opts.cacheTtlMs });
    while (cache.size > opts.cacheMax) cache.delete(cache.keys().next().value as string);
  };

  const lookupOne = (ip: string): Promise<Outcome> | Outcome => {
    const hit = cached(ip);
    if (hit) {
      metrics?.cacheHits.inc();
      return hit;
    }
    // While the API is known to be absent, ask nothing: the probe looks again.
    if (state === 'absent') return { kind: 'absent' };
    let pending = inFlight.get(ip);
    if (!pending) {
      pending = fetchOne(ip, 'lookup').then((outcome) => {
        inFlight.delete(ip);
        if (outcome.kind === 'held' || outcome.kind === 'free') remember(ip, outcome);
        return outcome;
      });
      inFlight.set(ip, pending);
    }
    return pending;
  };

  if (opts.probeAtStart) void probe();

  return {
    async lookup(canonicalIPs: readonly string[]): Promise<AllocatedIPs> {
      const outcomes = new Map<string, Outcome>();
      await Promise.all(
        [...new Set(canonicalIPs)].map(async (ip) => {
          outcomes.set(ip, await lookupOne(ip));
        }),
      );
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
    },
    describe: () => ({
      mode: 'on-demand lookups (GET ipaddresses/<ip>)',
      state,
      ...(state === 'unavailable' ? { effect: 'Cluster addresses allowed unchecked, with a warning' } : {}),
      ...(state === 'absent'
        ? { effect: 'the cluster serves no IPAddress API: ClusterAddressAllocated skipped' }
        : {}),
      ...(lastError ? { lastError } : {}),
      ...(lastSuccess ? { lastSuccess } : {}),
      cache: { entries: cache.size, max: opts.cacheMax, ttlSeconds: opts.cacheTtlMs / 1000 },
      inFlight: active,
      queued: waiting.length,
      timeoutSeconds: opts.timeoutMs / 1000,
    }),
    state: () => state,
    probe: async () => {
      await probe();
      return state;
    },
    lastErrorReason: () => (state === 'unavailable' ? lastError?.reason : undefined),
    cacheSize: () => cache.size,
    close: async () => {
      closed = true;
      if (probeTimer) clearTimeout(probeTimer);
      probeTimer = undefined;
      for (const c of controllers) c.abort();
      await Promise.allSettled([...inFlight.values()]);
      deps.get.close();
    },
  };
}

function unreachable(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? `API server unreachable (${code})` : 'API server unreachable';
}

function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | undefined)?.code;
  const first = text.split('\n')[0] ?? '';
  return typeof code === 'string' && !first.includes(code) ? `${first} (${code})` : first;
}
