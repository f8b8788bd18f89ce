/**
 * Writes the audit's reports (PolicyReport or OpenReports Report) after each
 * pass of the replica that audits: creates a namespace's report when its
 * Gateways have findings, updates it when they change, and deletes it when
 * they are gone. Only objects carrying this product's managed-by label are
 * listed, updated or deleted, so other tools' reports are never touched.
 *
 * When the report API is not served (the CRD is not installed: 404 on the
 * list), the writer says so in one log line and does nothing more until a
 * later pass finds it served; the audit itself goes on either way.
 *
 * A write that fails deletes nothing: reports are deleted only once every
 * create and update of the round went through, and a list that fails or
 * answers without items stops the round before any write. The round is tried
 * again after a backoff (5 s doubling to 5 min, ±20 %, never sooner than a
 * Retry-After, which also ends the round at once) with the latest result,
 * while this replica leads: every request is sent only after checking that it
 * still does, so a replica that lost its lease writes nothing more.
 */
import { errorMessage } from '../error-text.js';
import type { Logger } from 'pino';
import type { AuditResult } from './pass.js';
import {
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REPORT_NAME,
  desiredReports,
  reportContent,
  seenTimestamps,
  type ReportApi,
  type ReportObject,
} from './reports.js';
import { asRecord, own, stringAt, type JsonRecord } from '../json/record.js';
import type { KubeClient, KubeMethod } from '../kube/client.js';
import { backoffDelay, type Random } from '../kube/backoff.js';
import {
  BadAnswerError,
  describeKubeError,
  httpStatusOf,
  KubeApiError,
  MAX_RETRY_AFTER_MS,
} from '../kube/errors.js';

export interface ReportWriterOptions {
  readonly client: KubeClient;
  readonly api: ReportApi;
  readonly logger: Logger;
  /** Per request; default 10 s. */
  readonly timeoutMs?: number;
  /** Unix milliseconds (tests). */
  readonly now?: () => number;
  /** Whether this replica still audits (holds the lease); checked before every request. Default always. */
  readonly leading?: () => boolean;
  /** Backoff between retries of a failed round; default 5 s doubling to 5 min. */
  readonly retry?: { readonly initialMs: number; readonly maxMs: number };
  /** For the retry's jitter; default Math.random (tests fix it). */
  readonly random?: Random;
}

export interface ReportWriteOutcome {
  readonly state: 'written' | 'absent' | 'failed';
  readonly created: number;
  readonly updated: number;
  readonly deleted: number;
  readonly unchanged: number;
}

export interface ReportWriter {
  /** One round for this result (after any round in flight); a failed round is retried by itself later. */
  write(result: AuditResult): Promise<ReportWriteOutcome>;
  describe(): Readonly<Record<string, unknown>>;
  /** No more rounds or retries; waits for the one in flight. */
  stop(): Promise<void>;
}

/** Said when the lease was lost between two requests of a round. */
export const NOT_LEADING_WRITES = 'no longer the audit leader: report writes stopped';

/** One of our reports as listed: where it is, its resourceVersion, and the object as sent. */
interface Stored {
  readonly namespace: string;
  readonly resourceVersion: string | undefined;
  readonly object: JsonRecord;
}

/** The reports of a list page named REPORT_NAME, read through json/record.ts. */
function readPage(answer: unknown): { readonly items: Stored[]; readonly continueToken: string | undefined } {
  const page = asRecord(answer);
  const items: Stored[] = [];
  const listed = own(page, 'items');
  // Not a list (a proxy's page, a cut-off answer): reading on would take our reports for gone.
  if (!Array.isArray(listed))
    throw new BadAnswerError('not-a-list', 'the report list answer has no items array');
  for (const item of listed as unknown[]) {
    const object = asRecord(item);
    const metadata = asRecord(own(object, 'metadata'));
    const namespace = stringAt(metadata, 'namespace');
    if (object && namespace !== undefined && stringAt(metadata, 'name') === REPORT_NAME)
      items.push({ namespace, resourceVersion: stringAt(metadata, 'resourceVersion'), object });
  }
  const next = stringAt(asRecord(own(page, 'metadata')), 'continue');
  return { items, continueToken: next || undefined };
}

/** The parts of a stored report that reportContent and seenTimestamps compare. */
function comparable(stored: Stored): {
  metadata: { annotations: unknown };
  summary: unknown;
  results: unknown;
} {
  return {
    metadata: { annotations: own(asRecord(own(stored.object, 'metadata')), 'annotations') },
    summary: own(stored.object, 'summary'),
    results: own(stored.object, 'results'),
  };
}

/**
 * Reports listed per page, and the answer size allowed for one page. A report
 * holds up to 1,000 results and may approach etcd's 1.5 MiB object limit, so
 * a page of 500 could be hundreds of MiB: far past the raw client's 8 MiB cap
 * (every write would then fail) and past the pod's memory. Ten reports fit
 * 16 MiB whatever their size; small clusters still need one request.
 */
const LIST_PAGE = 10;
const LIST_PAGE_MAX_BYTES = 16 * 1024 * 1024;

type Counts = { created: number; updated: number; deleted: number; unchanged: number };

const NOTHING: Counts = { created: 0, updated: 0, deleted: 0, unchanged: 0 };

class KubeReportWriter implements ReportWriter {
  private readonly base: string;
  private readonly what: string;
  private readonly timeoutMs: number;
  private state: ReportWriteOutcome['state'] | 'pending' = 'pending';
  private lastError: string | undefined;
  /** Rounds run one after another. */
  private queue: Promise<void> = Promise.resolve();
  private latest: AuditResult | undefined;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryAt: number | undefined;
  /** The longest Retry-After of the current round's answers. */
  private retryAfterMs: number | undefined;
  private stopped = false;

  constructor(private readonly opts: ReportWriterOptions) {
    this.base = `/apis/${opts.api.group}/${opts.api.version}`;
    this.what = `${opts.api.plural}.${opts.api.group}/${opts.api.version}`;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
  }

  async write(result: AuditResult): Promise<ReportWriteOutcome> {
    this.latest = result;
    this.cancelRetry();
    const round = this.queue.then(() => this.round(result));
    this.queue = round.then(() => undefined);
    const outcome = await round;
    if (outcome.state === 'failed' && !this.stopped && this.isLeading()) this.scheduleRetry();
    else this.failures = 0;
    return outcome;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelRetry();
    await this.queue;
  }

  /** No retry pending: its timer cleared, and none left for describe() to count down to. */
  private cancelRetry(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.retryAt = undefined;
  }

  private isLeading(): boolean {
    return this.opts.leading?.() ?? true;
  }

  /** The next try of the latest result: doubling backoff with jitter, never sooner than the Retry-After. */
  private scheduleRetry(): void {
    this.failures++;
    const { initialMs, maxMs } = this.opts.retry ?? { initialMs: 5_000, maxMs: 5 * 60_000 };
    const backoff = backoffDelay({ initialMs, maxMs }, this.failures, this.opts.random ?? Math.random);
    const delay = Math.round(Math.max(backoff, Math.min(this.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS)));
    this.retryAt = Date.now() + delay;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.retryAt = undefined;
      if (this.latest && !this.stopped && this.isLeading()) void this.write(this.latest);
    }, delay);
    this.retryTimer.unref();
  }

  private async round(result: AuditResult): Promise<ReportWriteOutcome> {
    this.retryAfterMs = undefined;
    let stored: Map<string, Stored>;
    try {
      stored = await this.listOurs();
    } catch (err) {
      if (httpStatusOf(err) === 404) return this.absent();
      return this.failed(err);
    }
    if (this.state === 'absent')
      this.opts.logger.info({ api: this.what }, `audit reports: ${this.what} is served now; writing reports`);
    try {
      const counts = await this.sync(result, stored);
      this.state = 'written';
      this.lastError = undefined;
      if (counts.created + counts.updated + counts.deleted > 0)
        this.opts.logger.info({ api: this.what, ...counts }, 'audit reports written');
      return { state: this.state, ...counts };
    } catch (err) {
      return this.failed(err);
    }
  }

  describe(): Readonly<Record<string, unknown>> {
    const { retryAt } = this;
    return {
      api: this.what,
      state: this.state,
      ...(this.lastError ? { lastError: this.lastError } : {}),
      ...(retryAt !== undefined ? { nextRetryInMs: Math.max(0, retryAt - Date.now()) } : {}),
    };
  }

  private collection(ns: string): string {
    return `${this.base}/namespaces/${encodeURIComponent(ns)}/${this.opts.api.plural}`;
  }

  /** Every request of a round: only while leading, and the Retry-After of a refusal remembered. */
  private async request(
    method: KubeMethod,
    path: string,
    extra: { body?: unknown; query?: Record<string, string>; maxBodyBytes?: number } = {},
  ): Promise<unknown> {
    if (this.stopped || !this.isLeading()) throw new Error(NOT_LEADING_WRITES);
    try {
      return await this.opts.client.json({ method, path, timeoutMs: this.timeoutMs, ...extra });
    } catch (err) {
      if (err instanceof KubeApiError && err.retryAfterMs !== undefined)
        this.retryAfterMs = Math.max(this.retryAfterMs ?? 0, err.retryAfterMs);
      throw err;
    }
  }

  /** Every report of ours, all namespaces, page by page. */
  private async listOurs(): Promise<Map<string, Stored>> {
    const out = new Map<string, Stored>();
    let token: string | undefined;
    do {
      const query: Record<string, string> = {
        labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
        limit: String(LIST_PAGE),
        ...(token ? { continue: token } : {}),
      };
      const page = readPage(
        await this.request('GET', `${this.base}/${this.opts.api.plural}`, {
          query,
          maxBodyBytes: LIST_PAGE_MAX_BYTES,
        }),
      );
      for (const item of page.items) out.set(item.namespace, item);
      token = page.continueToken;
    } while (token);
    return out;
  }

  private async create(desired: ReportObject, counts: Counts): Promise<void> {
    const ns = desired.metadata.namespace;
    try {
      await this.request('POST', this.collection(ns), { body: desired });
      counts.created++;
    } catch (err) {
      // An object of that name without our label belongs to someone else: leave it alone.
      if (httpStatusOf(err) !== 409) throw err;
      this.opts.logger.warn(
        { report: `${ns}/${REPORT_NAME}`, api: this.what },
        'audit reports: a report of that name exists without our label; left alone',
      );
    }
  }

  private async update(desired: ReportObject, stored: Stored, counts: Counts): Promise<void> {
    if (reportContent(comparable(stored)) === reportContent(desired)) {
      counts.unchanged++;
      return;
    }
    const metadata = { ...desired.metadata, resourceVersion: stored.resourceVersion };
    const path = `${this.collection(desired.metadata.namespace)}/${REPORT_NAME}`;
    await this.request('PUT', path, { body: { ...desired, metadata } });
    counts.updated++;
  }

  private async remove(ns: string, counts: Counts): Promise<void> {
    try {
      await this.request('DELETE', `${this.collection(ns)}/${REPORT_NAME}`);
      counts.deleted++;
    } catch (err) {
      if (httpStatusOf(err) !== 404) throw err; // already gone
    }
  }

  private async sync(result: AuditResult, stored: Map<string, Stored>): Promise<Counts> {
    const counts = { ...NOTHING };
    const seen = new Map<string, number>();
    for (const s of stored.values()) for (const [k, v] of seenTimestamps(comparable(s))) seen.set(k, v);
    const nowSeconds = Math.floor((this.opts.now ?? Date.now)() / 1000);
    const desired = desiredReports(result, this.opts.api, { nowSeconds, seen });
    // One namespace failing (a conflict, a namespace being deleted) must not stop the others.
    const failures: string[] = [];
    const attempt = async (ns: string, job: () => Promise<void>): Promise<void> => {
      try {
        await job();
      } catch (err) {
        // Lost the lease, or the server asked to wait: no further request this round.
        if (this.retryAfterMs !== undefined || errorMessage(err) === NOT_LEADING_WRITES) throw err;
        failures.push(`${ns}: ${describeKubeError(err)}`);
      }
    };
    for (const [ns, report] of desired) {
      const old = stored.get(ns);
      await attempt(ns, () => (old ? this.update(report, old, counts) : this.create(report, counts)));
    }
    // A round with a failed write deletes nothing: the stale reports stay until a round goes through.
    if (failures.length === 0)
      for (const ns of stored.keys()) if (!desired.has(ns)) await attempt(ns, () => this.remove(ns, counts));
    if (failures.length > 0)
      throw new Error(
        `${failures.length} report writes failed (nothing deleted; retried): ${failures.slice(0, 3).join('; ')}`,
      );
    return counts;
  }

  private absent(): ReportWriteOutcome {
    if (this.state !== 'absent')
      this.opts.logger.warn(
        { api: this.what },
        `audit reports: ${this.what} is not served (is its CRD installed?); no reports are written until it is, the audit goes on`,
      );
    this.state = 'absent';
    return { state: this.state, ...NOTHING };
  }

  private failed(err: unknown): ReportWriteOutcome {
    const message =
      err instanceof Error && httpStatusOf(err) === undefined ? err.message : describeKubeError(err);
    // Said once per distinct error, not once per pass.
    if (message !== this.lastError)
      this.opts.logger.warn(
        { api: this.what, err: message },
        'audit reports: writing failed; retried with backoff',
      );
    this.lastError = message;
    this.state = 'failed';
    return { state: this.state, ...NOTHING };
  }
}

export function startReportWriter(opts: ReportWriterOptions): ReportWriter {
  return new KubeReportWriter(opts);
}
