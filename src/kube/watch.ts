/**
 * One cluster-scoped resource kept in memory with an informer (informer.ts)
 * (list, then watch; the informer relists by itself on 410 Gone). On any other
 * error the informer stops: this wrapper starts a fresh one with capped
 * exponential backoff (±20 % jitter, never sooner than a Retry-After) while
 * the last listed objects stay in use. Each watch stream (watch-stream.ts) is
 * bounded in time, so one left silent by a broken network path is replaced. It also
 * falls back through API versions (v1 → v1beta1) when a version answers 404
 * before ever listing, and reports "absent" when none is served.
 */
import type { Informer, KubernetesListObject, KubernetesObject } from './informer.js';
import type { Logger } from 'pino';
import type { Counter, Gauge } from 'prom-client';
import { asRecord, own } from '../json/record.js';
import type { KubeClient } from './client.js';
import { BadAnswerError, describeKubeError, httpStatusOf, retryAfterWait, withTimeout } from './errors.js';
import { backoffDelay, type Random } from './backoff.js';
import { makeStoppableInformer } from './watch-stream.js';

export interface BackoffOptions {
  /** First delay after an error (default 500 ms). */
  readonly initialMs: number;
  /** Largest delay before jitter (default 15 s). */
  readonly maxMs: number;
  /** A watch that ran this long without error starts again from initialMs (default 10 s). */
  readonly resetAfterMs: number;
  /** When no version is served, how often to look again (default 60 s). */
  readonly absentRetryMs: number;
  /** A list that takes longer than this counts as failed (default 10 s). */
  readonly listTimeoutMs: number;
  /** The server is asked to end each watch after this long, times 1 to 2 (default 60 s). */
  readonly watchTimeoutMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  initialMs: 500,
  maxMs: 15_000,
  resetAfterMs: 10_000,
  absentRetryMs: 60_000,
  listTimeoutMs: 10_000,
  watchTimeoutMs: 60_000,
};

/** The wait before restart number `failures`: doubling from initialMs to maxMs, ±20 %, at least the Retry-After. */
export function restartDelay(
  backoff: BackoffOptions,
  failures: number,
  err: unknown,
  random: Random,
): number {
  return Math.max(backoffDelay(backoff, failures, random), retryAfterWait(err));
}

/** The watch's own metrics (restarts, last sync), labelled by resource. */
export interface WatchMetrics {
  readonly watchRestarts: Counter<'resource'>;
  /** Answers (list bodies, watch lines) that came but could not be used, by `reason` (BadAnswerReason). */
  readonly badAnswers: Counter<'resource' | 'reason'>;
  readonly lastSync: Gauge<'resource'>;
}

export type WatchState = 'starting' | 'synced' | 'restarting' | 'absent' | 'stopped';

/**
 * A list answer as the informer takes it: its resourceVersion and the items
 * that are objects (anything else in `items` is dropped). The objects' fields
 * are all optional in T and read defensively by its users.
 */
export function listOf<T extends KubernetesObject>(answer: unknown): KubernetesListObject<T> {
  const list = asRecord(answer);
  const listed = own(list, 'items');
  // An answer without items is not a list (a proxy's page, a cut-off answer): the last objects stay.
  if (!Array.isArray(listed)) throw new BadAnswerError('not-a-list', 'the list answer has no items array');
  const items = (listed as unknown[]).filter((i) => asRecord(i) !== undefined);
  const resourceVersion = own(asRecord(own(list, 'metadata')), 'resourceVersion');
  return {
    metadata: typeof resourceVersion === 'string' ? { resourceVersion } : {},
    items: items as T[],
  };
}

/** One list of `path` through the kube client, with the watch's field selector. */
export async function listResource<T extends KubernetesObject>(
  client: KubeClient,
  request: {
    readonly path: string;
    readonly fieldSelector?: string | undefined;
    readonly timeoutMs: number;
    readonly what?: string;
  },
): Promise<KubernetesListObject<T>> {
  const query: Record<string, string> = {};
  if (request.fieldSelector !== undefined) query['fieldSelector'] = request.fieldSelector;
  return listOf<T>(
    await client.json({
      path: request.path,
      query,
      timeoutMs: request.timeoutMs,
      ...(request.what ? { what: request.what } : {}),
    }),
  );
}

export interface ResourceWatchOptions {
  /** Lists go through it; the informer's watch uses its credentials. */
  readonly client: KubeClient;
  readonly group: string;
  /** Plural resource name, e.g. `servicecidrs`; also the metrics label. */
  readonly resource: string;
  /** Versions to try, preferred first. */
  readonly versions: readonly string[];
  /**
   * Sent with every list and watch (e.g. `metadata.name=X`, which RBAC needs to
   * authorise list and watch limited by resourceNames).
   */
  readonly fieldSelector?: string;
  /** Called (coalesced, after the informer's cache is updated) on every change and every (re)list. */
  readonly onChange: () => void;
  /** Called once each time every version answered 404. */
  readonly onAbsent?: () => void;
  readonly logger: Logger;
  readonly metrics: WatchMetrics;
  readonly backoff?: Partial<BackoffOptions>;
  /** For the jitter of restarts and watch lengths; default Math.random (tests fix it). */
  readonly random?: Random;
}

export interface WatchHealth {
  readonly resource: string;
  readonly apiVersion: string | undefined;
  readonly state: WatchState;
  readonly restarts: number;
  readonly lastError?: string;
  readonly lastSyncAt?: string;
  readonly nextRetryInMs?: number;
  readonly objects?: number;
}

export interface ResourceWatch<T extends KubernetesObject> {
  state(): WatchState;
  /** The group/version in use (the last one that listed), e.g. `networking.k8s.io/v1`. */
  apiVersion(): string | undefined;
  /** Objects of the last successful list plus later events; undefined before the first list. */
  objects(): readonly T[] | undefined;
  get(name: string): T | undefined;
  lastError(): string | undefined;
  health(): WatchHealth;
  stop(): Promise<void>;
}

/**
 * The state machine behind startResourceWatch: launch an informer on the
 * preferred version, fall back through versions on 404 before any list, and
 * restart with capped exponential backoff on any other error while the last
 * listed objects stay in use.
 */
class ResourceWatcher<T extends KubernetesObject> implements ResourceWatch<T> {
  private readonly backoff: BackoffOptions;
  private readonly random: Random;
  private readonly log: Logger;
  private watchState: WatchState = 'starting';
  private versionIndex = 0;
  /** Bumped whenever an informer is stopped: events and errors of an older one are ignored. */
  private generation = 0;
  private current: { stop: () => void } | undefined;
  /** The informer whose cache holds the data in use: the last one that listed. */
  private data: { informer: Informer<T>; version: string } | undefined;
  private failures = 0;
  private restarts = 0;
  private lastErrorText: string | undefined;
  private lastSyncAt: Date | undefined;
  private launchedAt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryAt: number | undefined;
  private emitPending = false;
  private absentLogged = false;

  constructor(private readonly opts: ResourceWatchOptions) {
    this.backoff = { ...DEFAULT_BACKOFF, ...opts.backoff };
    this.random = opts.random ?? Math.random;
    this.log = opts.logger.child({ resource: `${opts.resource}.${opts.group}` });
    // Present from the start (at 0), so rate() and alerts work before the first restart.
    opts.metrics.watchRestarts.inc({ resource: opts.resource }, 0);
  }

  state(): WatchState {
    return this.watchState;
  }

  apiVersion(): string | undefined {
    return this.data ? `${this.opts.group}/${this.data.version}` : undefined;
  }

  objects(): readonly T[] | undefined {
    return this.data?.informer.list();
  }

  get(name: string): T | undefined {
    return this.data?.informer.get(name);
  }

  lastError(): string | undefined {
    return this.lastErrorText;
  }

  health(): WatchHealth {
    const { lastErrorText, lastSyncAt, retryAt, data } = this;
    return {
      resource: `${this.opts.resource}.${this.opts.group}`,
      apiVersion: this.apiVersion(),
      state: this.watchState,
      restarts: this.restarts,
      ...(lastErrorText !== undefined ? { lastError: lastErrorText } : {}),
      ...(lastSyncAt ? { lastSyncAt: lastSyncAt.toISOString() } : {}),
      ...(retryAt !== undefined ? { nextRetryInMs: Math.max(0, retryAt - Date.now()) } : {}),
      ...(data ? { objects: data.informer.list().length } : {}),
    };
  }

  async stop(): Promise<void> {
    this.watchState = 'stopped';
    clearTimeout(this.retryTimer);
    this.stopInformer();
  }

  private markSynced(): void {
    this.lastSyncAt = new Date();
    this.opts.metrics.lastSync.set({ resource: this.opts.resource }, this.lastSyncAt.getTime() / 1000);
  }

  private scheduleEmit(): void {
    if (this.emitPending) return;
    this.emitPending = true;
    // After the informer finished applying a whole list, not after each item of it.
    setImmediate(() => {
      this.emitPending = false;
      if (this.watchState !== 'stopped') this.opts.onChange();
    });
  }

  private stopInformer(): void {
    const running = this.current;
    this.current = undefined;
    this.generation++; // errors from the aborted request are ignored by their stale generation
    running?.stop();
  }

  private schedule(delayMs: number, run: () => void): void {
    clearTimeout(this.retryTimer);
    this.retryAt = Date.now() + delayMs;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.retryAt = undefined;
      if (this.watchState !== 'stopped') run();
    }, delayMs);
  }

  /** The informer's list call: lists, and makes that list the data in use. */
  private lister(version: string, path: string, live: () => boolean, cache: () => Informer<T>) {
    return async (): Promise<KubernetesListObject<T>> => {
      const list = await withTimeout(
        listResource<T>(this.opts.client, {
          path,
          fieldSelector: this.opts.fieldSelector,
          // The client's deadline is a backstop: the race below names the list.
          timeoutMs: this.backoff.listTimeoutMs + 1_000,
        }),
        this.backoff.listTimeoutMs,
        `list ${path}`,
      );
      // Stopped meanwhile: fail, so the informer does not go on to open a watch.
      if (!live()) throw new Error(`${path}: informer stopped`);
      // The informer applies this list right after it resolves; the cache is complete by the emit.
      const wasRestarting = this.watchState === 'restarting' || this.data === undefined;
      this.data = { informer: cache(), version };
      this.watchState = 'synced';
      this.lastErrorText = undefined;
      this.markSynced();
      this.scheduleEmit();
      if (wasRestarting)
        this.log.info(
          { apiVersion: `${this.opts.group}/${version}`, objects: list.items.length },
          'watch synced',
        );
      return list;
    };
  }

  launch(): void {
    this.stopInformer();
    const gen = this.generation;
    const version = this.opts.versions[this.versionIndex]!;
    const path = `/apis/${this.opts.group}/${version}/${this.opts.resource}`;
    const live = (): boolean => gen === this.generation && this.watchState !== 'stopped';
    const made: { informer: Informer<T>; stop: () => void } = makeStoppableInformer<T>(
      this.opts.client,
      path,
      this.lister(version, path, live, (): Informer<T> => made.informer),
      {
        fieldSelector: this.opts.fieldSelector,
        watchTimeoutMs: this.backoff.watchTimeoutMs,
        startTimeoutMs: this.backoff.listTimeoutMs,
        random: this.random,
      },
    );
    const changed = (): void => {
      if (!live()) return;
      this.markSynced();
      this.scheduleEmit();
    };
    const informer = made.informer;
    informer.on('add', changed);
    informer.on('update', changed);
    informer.on('delete', changed);
    informer.on('error', (err: unknown) => {
      if (live()) this.onError(version, err);
    });
    this.current = made;
    this.launchedAt = Date.now();
    informer.start().catch((err: unknown) => {
      if (live()) this.onError(version, err);
    });
  }

  private onError(version: string, err: unknown): void {
    this.stopInformer();
    if (httpStatusOf(err) === 404 && this.data === undefined) this.onNotServed(version);
    else this.onFailure(version, err);
  }

  /** A 404 before any list: try the next version, or say the API is absent and look again later. */
  private onNotServed(version: string): void {
    const { group, versions } = this.opts;
    if (this.versionIndex + 1 < versions.length) {
      this.log.info(
        { apiVersion: `${group}/${version}`, next: `${group}/${versions[this.versionIndex + 1]}` },
        'API version not served (404); trying the next one',
      );
      this.versionIndex++;
      this.launch();
      return;
    }
    this.watchState = 'absent';
    this.lastErrorText = `none of ${versions.map((v) => `${group}/${v}`).join(', ')} is served (404)`;
    if (!this.absentLogged) {
      this.absentLogged = true;
      this.opts.onAbsent?.();
    } else this.log.debug({ err: this.lastErrorText }, 'API still not served');
    this.versionIndex = 0;
    this.schedule(this.backoff.absentRetryMs, () => this.launch());
  }

  /** Any other error: restart after a capped exponential delay, keeping the last objects. */
  private onFailure(version: string, err: unknown): void {
    const { backoff } = this;
    if (Date.now() - this.launchedAt >= backoff.resetAfterMs) this.failures = 0;
    this.failures++;
    const failures = this.failures;
    const delay = restartDelay(backoff, failures, err, this.random);
    this.lastErrorText = describeKubeError(err);
    if (err instanceof BadAnswerError)
      this.opts.metrics.badAnswers.inc({ resource: this.opts.resource, reason: err.reason });
    if (this.watchState !== 'starting') this.watchState = 'restarting';
    this.log.warn(
      { apiVersion: `${this.opts.group}/${version}`, err: this.lastErrorText, retryInMs: delay, failures },
      this.data ? 'watch failed; keeping the last known objects and restarting' : 'list failed; retrying',
    );
    this.schedule(delay, () => {
      this.restarts++;
      this.opts.metrics.watchRestarts.inc({ resource: this.opts.resource });
      this.launch();
    });
  }
}

export function startResourceWatch<T extends KubernetesObject>(opts: ResourceWatchOptions): ResourceWatch<T> {
  const watcher = new ResourceWatcher<T>(opts);
  watcher.launch();
  return watcher;
}
