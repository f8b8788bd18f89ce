/**
 * Keeps the policy's params ConfigMap (`serve --policy-params NAMESPACE/NAME`)
 * equal to the service ranges serve follows: on every change of the ranges,
 * when this replica becomes the audit leader, and every few minutes in case
 * someone edited it. It reads the ConfigMap first and writes (a JSON merge
 * patch of `data`) only when it differs. A failed read or write is logged,
 * counted and tried again after a backoff with jitter, never sooner than the
 * API server's Retry-After.
 *
 * Who writes: with the audit on, only the replica holding the audit Lease.
 * With the audit off there is no Lease, and every replica writes: each follows
 * the same ServiceCIDRs and writes only what differs, so the writes agree and
 * stop once one has landed.
 */
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { RuleInputs } from '../inputs/rule-inputs.js';
import { backoffDelay, JITTER_HALF, type Random } from '../kube/backoff.js';
import type { KubeClient } from '../kube/client.js';
import { describeKubeError, httpStatusOf, KubeApiError } from '../kube/errors.js';
import type { Leadership } from '../kube/lease.js';
import { paramsData } from '../policy/index.js';

export interface ParamsSyncMetrics {
  /** Writes that changed the ConfigMap. */
  readonly writes: Pick<Counter, 'inc'>;
  /** Reads or writes that failed (each retried after a backoff). */
  readonly failures: Pick<Counter, 'inc'>;
}

export interface ParamsSyncDeps {
  readonly client: Pick<KubeClient, 'json'>;
  readonly namespace: string;
  readonly name: string;
  readonly inputs: Pick<RuleInputs, 'current' | 'onChange'>;
  /** The audit's Lease (server/lease.ts); absent: no Lease (the audit is off), so this replica writes. */
  readonly leadership?: Leadership | undefined;
  readonly logger: Logger;
  readonly metrics: ParamsSyncMetrics;
  /** First wait after a failure, doubled per failure up to maxMs (default 1 s .. 60 s). */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /** Re-read this often while in step (default 5 min). */
  readonly resyncMs?: number;
  /** For the jitter (tests). */
  readonly random?: Random;
  readonly timeoutMs?: number;
}

export interface ParamsSync {
  /** For /readyz?verbose. */
  describe(): Readonly<Record<string, unknown>>;
  stop(): void;
}

const DEFAULT_BACKOFF = { initialMs: 1_000, maxMs: 60_000 };
const DEFAULT_RESYNC_MS = 5 * 60_000;

function sameData(have: unknown, want: Readonly<Record<string, string>>): boolean {
  if (typeof have !== 'object' || have === null) return Object.keys(want).length === 0;
  const record = have as Record<string, unknown>;
  const keys = Object.keys(record);
  return keys.length === Object.keys(want).length && keys.every((k) => record[k] === want[k]);
}

/** The ConfigMap's `data`, if the answer has one. */
function dataOf(answer: unknown): unknown {
  return typeof answer === 'object' && answer !== null ? (answer as { data?: unknown }).data : undefined;
}

/** The wait before the next try after `failures` failures in a row: doubling, half of it jitter, ≥ Retry-After. */
export function retryDelay(
  failures: number,
  err: unknown,
  backoff: { readonly initialMs: number; readonly maxMs: number },
  random: Random,
): number {
  const jittered = backoffDelay({ ...backoff, jitter: JITTER_HALF }, failures, random);
  const retryAfter = err instanceof KubeApiError ? err.retryAfterMs : undefined;
  return Math.max(jittered, retryAfter ?? 0);
}

/**
 * One run at a time: `kick` runs now (or once more after the run in progress),
 * `after` runs later, and nothing runs before `holdUntil`'s time.
 */
function singleFlight(run: () => Promise<void>) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  let again = false;
  let stopped = false;
  let notBefore = 0;
  const after = (delayMs: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(kick, Math.max(0, delayMs));
    timer.unref?.();
  };
  function kick(): void {
    if (stopped) return;
    const wait = notBefore - performance.now();
    if (wait > 0) return after(wait);
    if (running) {
      again = true;
      return;
    }
    running = true;
    void run().finally(() => {
      running = false;
      if (again) {
        again = false;
        kick();
      }
    });
  }
  return {
    kick,
    after,
    holdFor: (ms: number) => {
      notBefore = performance.now() + ms;
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** Reads the ConfigMap and writes `want` into it when it differs; true when it wrote. */
async function bringInStep(deps: ParamsSyncDeps, want: Readonly<Record<string, string>>): Promise<boolean> {
  const path = `/api/v1/namespaces/${deps.namespace}/configmaps/${deps.name}`;
  const timeoutMs = deps.timeoutMs ?? 10_000;
  const current = await deps.client.json({ method: 'GET', path, timeoutMs });
  if (sameData(dataOf(current), want)) return false;
  await deps.client.json({
    method: 'PATCH',
    path,
    body: { data: want },
    contentType: 'application/merge-patch+json',
    timeoutMs,
  });
  return true;
}

export function startParamsSync(deps: ParamsSyncDeps): ParamsSync {
  const log = deps.logger.child({ component: 'policy-params', configMap: `${deps.namespace}/${deps.name}` });
  let failures = 0;
  let state: Record<string, unknown> = { state: 'starting' };
  const flight = singleFlight(async () => {
    if (deps.leadership && !deps.leadership.isLeader()) {
      state = { state: 'not the audit leader: another replica writes' };
      return;
    }
    const now = deps.inputs.current();
    if (!now) {
      state = { state: 'service ranges unknown' };
      return;
    }
    const want = paramsData(now.ctx.ranges);
    try {
      if (await bringInStep(deps, want)) {
        deps.metrics.writes.inc();
        log.info({ data: want }, 'policy params updated');
      }
      failures = 0;
      state = { state: 'in step', data: want };
      flight.after(deps.resyncMs ?? DEFAULT_RESYNC_MS);
    } catch (err) {
      failures++;
      deps.metrics.failures.inc();
      const delay = retryDelay(failures, err, deps.backoff ?? DEFAULT_BACKOFF, deps.random ?? Math.random);
      const error = describeKubeError(err);
      state = { state: 'failing', failures, lastError: error };
      log.warn(
        { status: httpStatusOf(err), error, retryInMs: Math.round(delay) },
        'cannot update the policy params; will retry',
      );
      flight.holdFor(delay);
      flight.after(delay);
    }
  });
  const offInputs = deps.inputs.onChange(flight.kick);
  const offLeader = deps.leadership?.onChange(flight.kick);
  flight.kick();
  return {
    describe: () => ({ configMap: `${deps.namespace}/${deps.name}`, ...state }),
    stop() {
      flight.stop();
      offInputs();
      offLeader?.();
    },
  };
}
