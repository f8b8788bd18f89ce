/**
 * One cluster-scoped resource kept in memory with client-node's informer
 * (list, then watch; the informer relists by itself on 410 Gone). On any other
 * error the informer stops: this wrapper starts a fresh one with capped
 * exponential backoff while the last listed objects stay in use. It also
 * falls back through API versions (v1 → v1beta1) when a version answers 404
 * before ever listing, and reports "absent" when none is served.
 */
import { ListWatch, Watch } from '@kubernetes/client-node';
import type {
  Informer,
  KubeConfig,
  KubernetesListObject,
  KubernetesObject,
  ObjectCache,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { describeKubeError, httpStatusOf, withTimeout } from './errors.js';
import type { ClusterMetrics } from './metrics.js';

export interface BackoffOptions {
  /** First delay after an error (default 500 ms). */
  readonly initialMs: number;
  /** Largest delay (default 30 s). */
  readonly maxMs: number;
  /** A watch that ran this long without error starts again from initialMs (default 10 s). */
  readonly resetAfterMs: number;
  /** When no version is served, how often to look again (default 60 s). */
  readonly absentRetryMs: number;
  /** A list that takes longer than this counts as failed (default 30 s). */
  readonly listTimeoutMs: number;
}

const DEFAULT_BACKOFF: BackoffOptions = {
  initialMs: 500,
  maxMs: 30_000,
  resetAfterMs: 10_000,
  absentRetryMs: 60_000,
  listTimeoutMs: 30_000,
};

/**
 * client-node's Watch, but one that can be stopped while its request is still
 * being opened: ListWatch.stop() aborts only a request it already holds, so a
 * watch whose response arrives after stop() would otherwise stream forever.
 */
class StoppableWatch extends Watch {
  private stopped = false;
  private readonly controllers = new Set<AbortController>();

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    // `done` may run before super.watch returns (a failed connect or a non-200 answer).
    const request: { controller?: AbortController; finished?: boolean } = {};
    const controller = await super.watch(path, queryParams, callback, (err: unknown) => {
      request.finished = true;
      if (request.controller) this.controllers.delete(request.controller);
      done(err);
    });
    request.controller = controller;
    if (this.stopped) controller.abort();
    else if (!request.finished) this.controllers.add(controller);
    return controller;
  }

  stop(): void {
    this.stopped = true;
    for (const c of this.controllers) c.abort();
    this.controllers.clear();
  }
}

/**
 * An informer (client-node's ListWatch, which is what makeInformer builds)
 * on a StoppableWatch.
 */
function makeStoppableInformer<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  list: () => Promise<KubernetesListObject<T>>,
  fieldSelector?: string,
): { informer: Informer<T> & ObjectCache<T>; stop: () => void } {
  const watch = new StoppableWatch(kc);
  const informer = new ListWatch<T>(path, watch, list, false, undefined, fieldSelector);
  return {
    informer,
    stop: () => {
      watch.stop();
      void informer.stop().catch(() => {});
    },
  };
}

export type WatchState = 'starting' | 'synced' | 'restarting' | 'absent' | 'stopped';

export interface ResourceWatchOptions<T extends KubernetesObject> {
  readonly kc: KubeConfig;
  readonly group: string;
  /** Plural resource name, e.g. `servicecidrs`; also the metrics label. */
  readonly resource: string;
  /** Versions to try, preferred first. */
  readonly versions: readonly string[];
  readonly list: (version: string) => Promise<KubernetesListObject<T>>;
  /**
   * Sent with every watch (e.g. `metadata.name=X`, which RBAC needs to authorise
   * list and watch limited by resourceNames); `list` must apply the same one.
   */
  readonly fieldSelector?: string;
  /** Called (coalesced, after the informer's cache is updated) on every change and every (re)list. */
  readonly onChange: () => void;
  /** Called once each time every version answered 404. */
  readonly onAbsent?: () => void;
  readonly logger: Logger;
  readonly metrics: ClusterMetrics;
  readonly backoff?: Partial<BackoffOptions>;
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

export function startResourceWatch<T extends KubernetesObject>(
  opts: ResourceWatchOptions<T>,
): ResourceWatch<T> {
  const backoff: BackoffOptions = { ...DEFAULT_BACKOFF, ...opts.backoff };
  const log = opts.logger.child({ resource: `${opts.resource}.${opts.group}` });
  let state: WatchState = 'starting';
  let versionIndex = 0;
  let generation = 0;
  let current: { stop: () => void } | undefined;
  /** The informer whose cache holds the data in use: the last one that listed. */
  let data: { informer: ObjectCache<T>; version: string } | undefined;
  let failures = 0;
  let restarts = 0;
  let lastError: string | undefined;
  let lastSyncAt: Date | undefined;
  let launchedAt = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryAt: number | undefined;
  let emitPending = false;
  let absentLogged = false;

  // Present from the start (at 0), so rate() and alerts work before the first restart.
  opts.metrics.watchRestarts.inc({ resource: opts.resource }, 0);

  const markSynced = (): void => {
    lastSyncAt = new Date();
    opts.metrics.lastSync.set({ resource: opts.resource }, lastSyncAt.getTime() / 1000);
  };

  const scheduleEmit = (): void => {
    if (emitPending) return;
    emitPending = true;
    // After the informer finished applying a whole list, not after each item of it.
    setImmediate(() => {
      emitPending = false;
      if (state !== 'stopped') opts.onChange();
    });
  };

  const stopInformer = (): void => {
    const running = current;
    current = undefined;
    generation++; // errors from the aborted request are ignored by their stale generation
    running?.stop();
  };

  const schedule = (delayMs: number, run: () => void): void => {
    clearTimeout(retryTimer);
    retryAt = Date.now() + delayMs;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      retryAt = undefined;
      if (state !== 'stopped') run();
    }, delayMs);
  };

  const launch = (): void => {
    stopInformer();
    const gen = generation;
    const version = opts.versions[versionIndex]!;
    const path = `/apis/${opts.group}/${version}/${opts.resource}`;
    const live = (): boolean => gen === generation && state !== 'stopped';
    const made = makeStoppableInformer<T>(
      opts.kc,
      path,
      async () => {
        const list = await withTimeout(opts.list(version), backoff.listTimeoutMs, `list ${path}`);
        // Stopped meanwhile: fail, so the informer does not go on to open a watch.
        if (!live()) throw new Error(`${path}: informer stopped`);
        // The informer applies this list right after it resolves; the cache is complete by the emit.
        const wasRestarting = state === 'restarting' || data === undefined;
        data = { informer: made.informer, version };
        state = 'synced';
        lastError = undefined;
        markSynced();
        scheduleEmit();
        if (wasRestarting)
          log.info({ apiVersion: `${opts.group}/${version}`, objects: list.items.length }, 'watch synced');
        return list;
      },
      opts.fieldSelector,
    );
    const changed = (): void => {
      if (!live()) return;
      markSynced();
      scheduleEmit();
    };
    const informer = made.informer;
    informer.on('add', changed);
    informer.on('update', changed);
    informer.on('delete', changed);
    informer.on('error', (err: unknown) => {
      if (live()) onError(version, err);
    });
    current = made;
    launchedAt = Date.now();
    informer.start().catch((err: unknown) => {
      if (live()) onError(version, err);
    });
  };

  const onError = (version: string, err: unknown): void => {
    stopInformer();
    const status = httpStatusOf(err);
    if (status === 404 && data === undefined) {
      if (versionIndex + 1 < opts.versions.length) {
        log.info(
          {
            apiVersion: `${opts.group}/${version}`,
            next: `${opts.group}/${opts.versions[versionIndex + 1]}`,
          },
          'API version not served (404); trying the next one',
        );
        versionIndex++;
        launch();
        return;
      }
      state = 'absent';
      lastError = `none of ${opts.versions.map((v) => `${opts.group}/${v}`).join(', ')} is served (404)`;
      if (!absentLogged) {
        absentLogged = true;
        opts.onAbsent?.();
      } else log.debug({ err: lastError }, 'API still not served');
      versionIndex = 0;
      schedule(backoff.absentRetryMs, launch);
      return;
    }
    if (Date.now() - launchedAt >= backoff.resetAfterMs) failures = 0;
    failures++;
    const delay = Math.min(backoff.maxMs, backoff.initialMs * 2 ** (failures - 1));
    lastError = describeKubeError(err);
    if (state !== 'starting') state = 'restarting';
    log.warn(
      { apiVersion: `${opts.group}/${version}`, err: lastError, retryInMs: delay, failures },
      data ? 'watch failed; keeping the last known objects and restarting' : 'list failed; retrying',
    );
    schedule(delay, () => {
      restarts++;
      opts.metrics.watchRestarts.inc({ resource: opts.resource });
      launch();
    });
  };

  launch();

  return {
    state: () => state,
    apiVersion: () => (data ? `${opts.group}/${data.version}` : undefined),
    objects: () => data?.informer.list(),
    get: (name) => data?.informer.get(name),
    lastError: () => lastError,
    health: () => ({
      resource: `${opts.resource}.${opts.group}`,
      apiVersion: data ? `${opts.group}/${data.version}` : undefined,
      state,
      restarts,
      ...(lastError !== undefined ? { lastError } : {}),
      ...(lastSyncAt ? { lastSyncAt: lastSyncAt.toISOString() } : {}),
      ...(retryAt !== undefined ? { nextRetryInMs: Math.max(0, retryAt - Date.now()) } : {}),
      ...(data ? { objects: data.informer.list().length } : {}),
    }),
    stop: async () => {
      state = 'stopped';
      clearTimeout(retryTimer);
      stopInformer();
    },
  };
}
