/**
 * The server's background audit: a pass over the cluster's Gateways every
 * interval, and soon after anything the verdicts depend on changes (service
 * ranges, the allocated-IP data, the GEP revision). Passes never overlap; a
 * trigger during a pass queues one more. Results go to metrics, and one log
 * line per Gateway whose findings changed since the previous pass.
 */
import { errorMessage } from '../error-text.js';
import type { Logger } from 'pino';
import type { GatewayPage } from './gateway-pages.js';
import { clearAudit, recordAudit, type AuditMetrics } from './metrics.js';
import { auditPass, type AuditResult, type AuditedGateway, type JudgeGateway } from './pass.js';

/**
 * Gateways judged between two yields to the event loop in the server: short
 * stretches bound how long a review can wait behind a pass. Measured at
 * 100,000 Gateways on a quiet machine (Node 24, the pod's heap, three rounds
 * each, docs/dev/benchmarks.md): review p99 during a pass 2.95-3.91 ms with 10,
 * 2.57-3.00 ms with 2 (p99 during/off 1.49 and 1.39 pooled); a pass takes
 * 5-8 s instead of 4-7 s, and more reviews are answered while it runs.
 */
const YIELD_EVERY = 2;

export interface AuditLoopDeps {
  readonly intervalMs: number;
  /** Wait after a trigger, so a burst of changes causes one pass. */
  readonly debounceMs: number;
  readonly listPages: () => AsyncIterable<GatewayPage>;
  /** The judge for a pass, bound to the rule inputs in force now; undefined while they are unknown. */
  readonly judge: () => JudgeGateway | undefined;
  /** Subscribes to changes of the rule inputs (ranges, revision): each triggers a pass; returns the unsubscribe. */
  readonly onInputsChange?: (listener: () => void) => () => void;
  /** Whether this replica should audit now (it holds the audit lease); default always. */
  readonly leading?: () => boolean;
  /** After each successful pass of the leader (the report writer); its failures are its own to log. */
  readonly afterPass?: (result: AuditResult) => Promise<unknown>;
  readonly metrics: AuditMetrics;
  readonly logger: Logger;
}

export interface AuditLoop {
  trigger(reason: string): void;
  lastResult(): AuditResult | undefined;
  describe(): Readonly<Record<string, unknown>>;
  stop(): Promise<void>;
}

function fingerprint(g: AuditedGateway): string {
  return g.findings.map((f) => `${f.severity}:${f.code}@${f.field}`).join(',');
}

/** One log line per Gateway whose findings changed since the previous pass, and one when they clear. */
class FindingsChanges {
  private previous = new Map<string, string>();

  constructor(private readonly logger: Logger) {}

  reset(): void {
    this.previous = new Map();
  }

  /** Whether the pass must say that it saw this Gateway: only one flagged before can be "cleared". */
  flaggedBefore(key: string): boolean {
    return this.previous.has(key);
  }

  log(result: AuditResult): void {
    const now = new Map(result.flagged.map((g) => [`${g.namespace}/${g.name}`, fingerprint(g)]));
    // The pass lists only the Gateways flagged by the previous one (flaggedBefore), not every one.
    const present = new Set(result.audited);
    for (const g of result.flagged) {
      const key = `${g.namespace}/${g.name}`;
      if (this.previous.get(key) === now.get(key)) continue;
      this.logger.info(
        {
          gateway: key,
          findings: g.findings.map((f) => ({ code: f.code, field: f.field, severity: f.severity })),
        },
        'audit: findings changed',
      );
    }
    for (const key of this.previous.keys())
      if (!now.has(key) && present.has(key)) this.logger.info({ gateway: key }, 'audit: findings cleared');
    this.previous = now;
  }
}

const NOT_LEADING = 'no longer the audit leader (lease not renewed in time): pass abandoned';

/**
 * The pages while this replica leads: leadership lost (the lease not renewed
 * by its deadline) ends the pass before the next page is asked for, so a
 * replica that cannot renew stops auditing before another can take over.
 */
async function* whileLeading(
  pages: AsyncIterable<GatewayPage>,
  leading: (() => boolean) | undefined,
): AsyncGenerator<GatewayPage> {
  const iterator = pages[Symbol.asyncIterator]();
  for (;;) {
    if (leading && !leading()) {
      await iterator.return?.();
      throw new Error(NOT_LEADING);
    }
    const next = await iterator.next();
    if (next.done) return;
    yield next.value;
  }
}

/**
 * One pass of the leader: judged, recorded in the metrics, changes logged,
 * handed to `afterPass`. The outcome is a value: a failed pass leaves the
 * last results in the metrics.
 */
async function judgedPass(
  deps: AuditLoopDeps,
  judge: JudgeGateway,
  reason: string,
  changes: FindingsChanges,
): Promise<{ readonly result: AuditResult } | { readonly error: string }> {
  const started = Date.now();
  try {
    const result = await auditPass(whileLeading(deps.listPages(), deps.leading), judge, {
      yieldEvery: YIELD_EVERY,
      audited: (key) => changes.flaggedBefore(key),
    });
    const finished = Date.now();
    recordAudit(deps.metrics, result, (finished - started) / 1000, finished);
    changes.log(result);
    try {
      // Leadership lost while judging: the new leader writes; this replica must not.
      if (deps.leading && !deps.leading()) throw new Error(NOT_LEADING);
      await deps.afterPass?.(result);
    } catch (err) {
      deps.logger.warn({ err: errorMessage(err) }, 'audit: writing the results failed');
    }
    const { gateways, violations, warnings } = result;
    deps.logger.info(
      { reason, gateways, violations, warnings, durationMs: finished - started },
      'audit pass done',
    );
    return { result };
  } catch (err) {
    const error = errorMessage(err);
    deps.metrics.runs.inc({ result: 'error' });
    deps.logger.warn({ reason, err: error }, 'audit pass failed; the last results stay in the metrics');
    return { error };
  }
}

/** For /readyz?verbose. */
function describeLoop(
  deps: AuditLoopDeps,
  running: boolean,
  last: AuditResult | undefined,
  lastError: string | undefined,
): Readonly<Record<string, unknown>> {
  return {
    intervalSeconds: deps.intervalMs / 1000,
    running,
    ...(last ? { gateways: last.gateways, violations: last.violations, warnings: last.warnings } : {}),
    ...(lastError ? { lastError } : {}),
  };
}

export function startAuditLoop(deps: AuditLoopDeps): AuditLoop {
  let running: Promise<void> | undefined;
  let pending: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let last: AuditResult | undefined;
  let lastError: string | undefined;
  const changes = new FindingsChanges(deps.logger);

  const schedule = (reason: string, delayMs: number): void => {
    if (stopped) return;
    if (pending === undefined || pending === 'interval') pending = reason;
    if (running) return; // picked up when the running pass ends
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void run(), delayMs);
    timer.unref();
  };

  const pass = async (reason: string): Promise<void> => {
    if (deps.leading && !deps.leading()) {
      // Another replica audits; this one's gauges must not repeat stale findings.
      clearAudit(deps.metrics);
      changes.reset();
      last = undefined;
      return;
    }
    const judge = deps.judge();
    if (!judge) {
      deps.logger.debug({ reason }, 'audit: skipped, the rule inputs are not known yet');
      return;
    }
    const outcome = await judgedPass(deps, judge, reason, changes);
    if ('error' in outcome) lastError = outcome.error;
    else [last, lastError] = [outcome.result, undefined];
  };

  const run = async (): Promise<void> => {
    timer = undefined;
    const reason = pending ?? 'interval';
    pending = undefined;
    running = pass(reason);
    await running;
    running = undefined;
    if (pending !== undefined) schedule(pending, deps.debounceMs);
    else schedule('interval', deps.intervalMs);
  };

  const unsubscribe = deps.onInputsChange?.(() => schedule('rule inputs changed', deps.debounceMs));

  schedule('start', deps.debounceMs);

  return {
    trigger: (reason) => schedule(reason, deps.debounceMs),
    lastResult: () => last,
    describe: () => describeLoop(deps, running !== undefined, last, lastError),
    async stop() {
      stopped = true;
      unsubscribe?.();
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
