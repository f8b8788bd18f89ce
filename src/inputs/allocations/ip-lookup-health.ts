/**
 * Whether allocated-IP lookups work: the state /readyz?verbose and the
 * `..._lookup_up` metric show, the last error and since when, one log line
 * per change, and the probe schedule while they fail (soon after a first
 * failure, since a start-up on a busy node can miss the deadline, then less
 * often).
 */
import type { Logger } from 'pino';
import { backoffDelay, type Random } from '../../kube/backoff.js';
import type { AllocationLookupMetrics } from './ip-lookup-metrics.js';

export type LookupState =
  /** Nothing asked yet, probe pending. */
  | 'unknown'
  | 'ok'
  /** The last lookup or probe failed: Cluster IPs are allowed unchecked, with a warning. */
  | 'unavailable'
  /** The cluster serves no IPAddress API: the rule is skipped. */
  | 'absent';

export interface LookupError {
  readonly reason: string;
  readonly detail: string;
  /** The API server asked to wait this long (Retry-After): the next probe waits at least as long. */
  readonly retryAfterMs?: number;
}

export class LookupHealth {
  state: LookupState = 'unknown';
  lastError: (LookupError & { readonly since: string }) | undefined;
  lastSuccess: string | undefined;
  private failedProbes = 0;
  private probeTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly logger: Logger,
    private readonly metrics: AllocationLookupMetrics | undefined,
    /** The longest wait between probes while lookups fail, and the randomness of its jitter. */
    private readonly probes: { readonly intervalMs: number; readonly random: Random },
    /** Runs one probe; called by the schedule. */
    private readonly probe: () => Promise<void>,
  ) {}

  set(next: LookupState, error?: LookupError): void {
    const previous = this.state;
    this.state = next;
    this.metrics?.up.set(next === 'ok' ? 1 : 0);
    if (next === 'ok') {
      this.lastSuccess = new Date().toISOString();
      this.lastError = undefined;
    } else if (error) {
      const since =
        previous === 'unavailable' && this.lastError ? this.lastError.since : new Date().toISOString();
      this.lastError = { ...error, since };
    }
    if (next !== previous) this.logChange(previous, next, error);
    this.scheduleProbe();
  }

  private logChange(previous: LookupState, next: LookupState, error: LookupError | undefined): void {
    if (next === 'unavailable')
      this.logger.warn(
        { reason: error?.reason, detail: error?.detail },
        'allocated-IP lookups fail: Cluster addresses are allowed unchecked, with a warning, until the API server answers',
      );
    else if (next === 'absent')
      this.logger.warn(
        'the cluster serves no IPAddress API (networking.k8s.io/v1, Kubernetes 1.33+): the ClusterAddressAllocated rule is skipped',
      );
    else if (next === 'ok' && previous !== 'unknown') this.logger.info('allocated-IP lookups answer again');
  }

  /** After a probe: counts failures in a row, which lengthen the next wait (1 s, 2 s, … up to the interval, ±20 %, at least a Retry-After). */
  probed(failed: boolean): void {
    this.failedProbes = failed ? this.failedProbes + 1 : 0;
    // The probe's own set() has already scheduled the next one, with the count before this
    // failure: schedule it again with this failure counted.
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    if (this.closed || this.probeTimer || (this.state !== 'unavailable' && this.state !== 'absent')) return;
    // Jitter (±20 %): replicas that lost the API server together do not probe it in step.
    const base = backoffDelay(
      { initialMs: 1_000, maxMs: this.probes.intervalMs },
      this.failedProbes,
      this.probes.random,
    );
    // Never sooner than the last failure's Retry-After.
    const delay = Math.max(base, this.lastError?.retryAfterMs ?? 0);
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      void this.probe();
    }, delay);
    this.probeTimer.unref();
  }

  close(): void {
    this.closed = true;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
  }

  get isClosed(): boolean {
    return this.closed;
  }
}
