/**
 * One cluster-scoped resource kept in memory with an informer (informer.ts)
 * (list, then watch; the informer relists by itself on 410 Gone). On any other
 * error the informer stops: this wrapper starts a fresh one with capped
 * exponential backoff (±20 % jitter, never sooner than a Retry-After) while
 * the last listed objects stay in use. Every watch asks the server to end it
 * after 60-120 s (`timeoutSeconds`, resumed from its resourceVersion) and is
 * cut off here 15 s after that if it has not ended — a watch left silent by a
 * broken network path is replaced within a bounded time. It also
 * falls back through API versions (v1 → v1beta1) when a version answers 404
 * before ever listing, and reports "absent" when none is served.
 */
import { Informer, type KubernetesListObject, type KubernetesObject, type Watcher } from './informer.js';
import type { Logger } from 'pino';
import type { Counter, Gauge } from 'prom-client';
import { asRecord, own } from '../json/record.js';
import type { KubeClient } from './client.js';
import {
  BadAnswerError,
  describeKubeError,
  httpStatusOf,
  KubeApiError,
  retryAfterWait,
  withTimeout,
} from './errors.js';
import { backoffDelay, type Random } from './backoff.js';
import { readWatchLines, type WatchEvent } from './watch-lines.js';

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

/** A watch the server has not ended this long after its own timeoutSeconds is cut off here. */
const WATCH_GRACE_MS = 15_000;

/** The wait before restart number `failures`: doubling from initialMs to maxMs, ±20 %, at least the Retry-After. */
export function restartDelay(
  backoff: BackoffOptions,
  failures: number,
  err: unknown,
  random: Random,
): number {
  return Math.max(backoffDelay(backoff, failures, random), retryAfterWait(err));
}

/** The largest watch event held (one line); a larger one ends the watch as a bad answer. */
const MAX_EVENT_BYTES = 8 * 1024 * 1024;
/** A watch that ends this soon with no object event is an error (backoff), not a clean end to resume at once. */
const SHORT_WATCH_MS = 1_000;
/** A second 410 Gone this soon after the last is an error (backoff), not another relist at once. */
const GONE_AGAIN_MS = 10_000;

interface StreamState {
  objects: number;
  gone: boolean;
  finished: boolean;
}

/**
 * One event to the informer. An ERROR other than 410 ends the stream as the
 * error it is; a 410 is passed on (the informer forgets its resourceVersion
 * and relists when the stream ends).
 */
function passOn(
  event: WatchEvent,
  on: {
    readonly what: string;
    readonly seen: StreamState;
    readonly callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void;
    readonly finish: (err: unknown) => void;
  },
): void {
  if (event.type === 'ERROR') {
    const code = own(event.object, 'code');
    if (code !== 410) {
      on.finish(
        new KubeApiError({
          statusCode: typeof code === 'number' ? code : 500,
          body: JSON.stringify(event.object),
          what: `${on.what}: ERROR event`,
        }),
      );
      return;
    }
    on.seen.gone = true;
  } else on.seen.objects++;
  const handled = on.callback(event.type, event.object, event) as unknown;
  if (handled instanceof Promise) handled.catch((err: unknown) => on.finish(err));
}

/**
 * The informer's watch, on the kube client's transport (credentials, pools,
 * the start deadline) and a bounded line reader (src/kube/watch-lines.ts),
 * which refuses a line it cannot parse or of any length. It can be stopped
 * while its request is still being opened (Informer.stop() aborts only a
 * request it already holds), and it never lets a server make it loop: a
 * watch that ends within a second without an event, an ERROR event other
 * than 410, and a second 410 within 10 s end with an error (the watcher
 * restarts after backoff); one 410 relists at once.
 */
class StoppableWatch implements Watcher {
  private stopped = false;
  private readonly controllers = new Set<AbortController>();
  private lastGoneAt = -Infinity;

  /** `timeoutMs`: the watch's own length (asked of the server, times 1 to 2); `startMs`: until its answer starts. */
  constructor(
    private readonly client: KubeClient,
    private readonly timeoutMs: number,
    private readonly startMs: number,
    private readonly random: Random,
  ) {}

  async watch(
    path: string,
    queryParams: Record<string, string | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const controller = new AbortController();
    const seconds = Math.ceil((this.timeoutMs / 1000) * (1 + this.random()));
    const what = `watch ${path}`;
    const startedAt = Date.now();
    const seen: StreamState = { objects: 0, gone: false, finished: false };
    const finish = (err: unknown): void => {
      if (seen.finished) return;
      seen.finished = true;
      clearTimeout(deadline);
      this.controllers.delete(controller);
      controller.abort();
      done(this.outcome(what, err, seen, startedAt));
    };
    const deadline = setTimeout(
      () =>
        finish(
          new Error(`${what}: not ended ${WATCH_GRACE_MS / 1000} s after its ${seconds} s timeout; replaced`),
        ),
      seconds * 1000 + WATCH_GRACE_MS,
    );
    deadline.unref();
    controller.signal.addEventListener('abort', () => finish(new Error(`${what}: stopped`)), { once: true });
    if (this.stopped) {
      controller.abort();
      return controller;
    }
    this.controllers.add(controller);
    const query: Record<string, string> = {
      watch: 'true',
      timeoutSeconds: String(seconds),
      allowWatchBookmarks: 'true',
    };
    for (const [k, v] of Object.entries(queryParams)) if (v !== undefined) query[k] = String(v);
    try {
      const body = await this.client.stream({
        path,
        query,
        startTimeoutMs: this.startMs,
        signal: controller.signal,
        what,
      });
      readWatchLines(body, {
        maxLineBytes: MAX_EVENT_BYTES,
        what,
        onEvent: (event) => passOn(event, { what, seen, callback, finish }),
        onEnd: finish,
      });
    } catch (err) {
      finish(err);
    }
    return controller;
  }

  /** What the informer is told when a stream ends: null resumes (or relists after a 410) at once; an error backs off. */
  private outcome(
    what: string,
    err: unknown,
    seen: { readonly objects: number; readonly gone: boolean },
    startedAt: number,
  ): unknown {
    if (seen.gone || httpStatusOf(err) === 410) {
      const now = Date.now();
      const again = now - this.lastGoneAt < GONE_AGAIN_MS;
      this.lastGoneAt = now;
      return again ? new Error(`${what}: 410 Gone again within ${GONE_AGAIN_MS / 1000} s of a relist`) : err;
    }
    if (err === null && seen.objects === 0 && Date.now() - startedAt < SHORT_WATCH_MS)
      return new Error(`${what}: ended within ${SHORT_WATCH_MS / 1000} s with no event`);
    return err;
  }

  stop(): void {
    this.stopped = true;
    for (const c of [...this.controllers]) c.abort();
    this.controllers.clear();
  }
}

/** An informer on a StoppableWatch. */
function makeStoppableInformer<T extends KubernetesObject>(
  client: KubeClient,
  path: string,
  list: () => Promise<KubernetesListObject<T>>,
  opts: {
    readonly fieldSelector: string | undefined;
    readonly watchTimeoutMs: number;
    readonly startTimeoutMs: number;
    readonly random: Random;
  },
): { informer: Informer<T>; stop: () => void } {
  const watch = new StoppableWatch(client, opts.watchTimeoutMs, opts.startTimeoutMs, opts.random);
  const informer = new Informer<T>({ path, watch, list, fieldSelector: opts.fieldSelector });
  return {
    informer,
    stop: () => {
      watch.stop();
      void informer.stop().catch(() => {});
    },
  };
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
