/**
 * One watch stream of a resource, as the informer (informer.ts) asks for it: opened on the kube
 * client's transport with a bounded line reader, asked to end after 60-120 s and cut off 15 s
 * after that if it has not, stoppable while it opens, and never letting a server make it loop
 * (an empty watch that ends at once, an ERROR event other than 410, a second 410 within 10 s
 * end it with an error). The resource watcher (watch.ts) starts and restarts these.
 */
import { Informer, type KubernetesListObject, type KubernetesObject, type Watcher } from './informer.js';
import { own } from '../json/record.js';
import type { Random } from './backoff.js';
import type { KubeClient } from './client.js';
import { httpStatusOf, KubeApiError } from './errors.js';
import { readWatchLines, type WatchEvent } from './watch-lines.js';

/** A watch the server has not ended this long after its own timeoutSeconds is cut off here. */
const WATCH_GRACE_MS = 15_000;

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
export function makeStoppableInformer<T extends KubernetesObject>(
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
