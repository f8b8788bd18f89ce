/**
 * A budget for request-body bytes in flight. Sixteen clients each sending a
 * 6 MB body at once held 316 MiB; the budget lets a request's body be read
 * only when its declared length fits, so the bytes buffered at any moment stay
 * near the budget. A request that does not fit waits (its socket paused: the
 * kernel's buffers and TCP flow control hold the client back) and is refused
 * if no room appears in time.
 *
 * Small bodies (ordinary reviews are a few KiB) have a lane of their own above
 * the budget, so large uploads queued or in flight never delay them: they wait
 * only when the lane is full too.
 */
export interface BodyBudgetLimits {
  /** Bytes of bodies that may be in flight at once. */
  readonly budgetBytes: number;
  /** Bodies up to this size use the small lane. */
  readonly smallBytes: number;
  /** Extra room, above the budget, for small bodies only. */
  readonly smallLaneBytes: number;
}

/**
 * Defaults, measured (docs/dev/reliability.md): each body in flight costs several
 * times its size until V8 collects (its bytes, the decoded string, the parsed
 * value, the chunks it arrived in). 16 concurrent 6 MB bodies peaked at
 * 221 MiB with a 24 MiB budget, 169 MiB with 16 MiB and 135 MiB with 8 MiB on
 * Node 20; 211-220 and 153-194 MiB on Node 24 at 24 and 8 MiB. 8 MiB, one of
 * the largest reviews at a time, keeps a replica far from the chart's 256 MiB.
 * Ordinary reviews (up to 64 KiB) get 8 MiB more of their own.
 */
export const DEFAULT_BODY_BUDGET: BodyBudgetLimits = {
  budgetBytes: 8 * 1024 * 1024,
  smallBytes: 64 * 1024,
  smallLaneBytes: 8 * 1024 * 1024,
};

/** The longest a request waits for room (less when the apiserver's timeout is short). */
export const BODY_WAIT_MS = 5_000;

export type Release = () => void;

interface Waiter {
  readonly bytes: number;
  readonly grant: (release: Release | undefined) => void;
  timer: NodeJS.Timeout;
}

export interface BodyBudget {
  /** Calls `grant` with a release function once `bytes` fit, or with undefined when the wait timed out. */
  acquire(bytes: number, waitMs: number, grant: (release: Release | undefined) => void): void;
  /**
   * The release function when `bytes` fit now (what `acquire` grants at once), else undefined:
   * the common case without a callback.
   */
  tryAcquire(bytes: number): Release | undefined;
  readonly inFlight: () => number;
  readonly waiting: () => number;
}

/** Whether a body of `bytes` fits beside `inFlight` bytes. */
function fitsBeside(limits: BodyBudgetLimits, inFlight: number, bytes: number): boolean {
  // One body always proceeds alone, whatever its size.
  if (inFlight === 0) return true;
  const room = bytes <= limits.smallBytes ? limits.budgetBytes + limits.smallLaneBytes : limits.budgetBytes;
  return inFlight + bytes <= room;
}

export function createBodyBudget(
  limits: BodyBudgetLimits,
  observe: (inFlight: number, waiting: number) => void = () => {},
  timedOut: () => void = () => {},
): BodyBudget {
  let inFlight = 0;
  const queue: Waiter[] = [];

  const take = (bytes: number): Release => {
    inFlight += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      inFlight -= bytes;
      admitWaiting();
      observe(inFlight, queue.length);
    };
  };

  /** First come, first served; a small body may pass a large one that does not fit yet. */
  const admitWaiting = () => {
    for (let i = 0; i < queue.length;) {
      const waiter = queue[i]!;
      if (!fitsBeside(limits, inFlight, waiter.bytes)) {
        i++;
        continue;
      }
      queue.splice(i, 1);
      clearTimeout(waiter.timer);
      waiter.grant(take(waiter.bytes));
    }
  };

  const tryAcquire = (bytes: number): Release | undefined => {
    // Nobody queued ahead, or a small body that fits its lane: go now.
    const goes = (queue.length === 0 || bytes <= limits.smallBytes) && fitsBeside(limits, inFlight, bytes);
    const release = goes ? take(bytes) : undefined;
    if (release) observe(inFlight, queue.length);
    return release;
  };

  return {
    tryAcquire,
    acquire(bytes, waitMs, grant) {
      const now = tryAcquire(bytes);
      if (now) return grant(now);
      const waiter: Waiter = {
        bytes,
        grant,
        timer: setTimeout(() => {
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          observe(inFlight, queue.length);
          timedOut();
          grant(undefined);
        }, waitMs),
      };
      waiter.timer.unref();
      queue.push(waiter);
      observe(inFlight, queue.length);
    },
    inFlight: () => inFlight,
    waiting: () => queue.length,
  };
}
