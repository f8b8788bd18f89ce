/**
 * How many allocated-IP GETs run at once, and who goes next: a few slots, a
 * bounded queue behind them, and a waiter that gives up when its deadline
 * passes, so a slow API server makes lookups fail fast instead of piling up.
 *
 * The queue is shared fairly between requesters, so that one namespace or
 * one user flooding it cannot leave another's lookups unchecked:
 * - each namespace, and each user, has at most `shareMax` lookups waiting;
 *   beyond, its own lookups are refused (and answered unchecked);
 * - a freed slot goes to the waiter whose namespace and user were served
 *   least recently (a requester that has not been served for a while, or
 *   never, goes before a flood's next lookup), first come first served
 *   between equals;
 * - with the whole queue full, a newcomer pushes out the newest waiter of
 *   the namespace or user with the most waiting, when that is more than the
 *   newcomer's own would have: several floods together cannot lock out a
 *   requester that asks little.
 * A requester is a namespace and a user together: a flood from one user over
 * many namespaces, or from many users in one namespace, is one flood.
 */

/** Who a lookup is for: the review's namespace and requesting user ('' when there is none). */
export interface Requester {
  readonly namespace: string;
  readonly user: string;
}

/** Lookups of the server itself (the audit) and of one-shot commands. */
export const NO_REQUESTER: Requester = { namespace: '', user: '' };

/** Why a lookup got no slot. */
export type SlotRefusal = 'namespace-share' | 'user-share' | 'queue-full' | 'pushed-out' | 'slot-timeout';

/** A slot, and whether the lookup waited for it; or why it got none. */
export type Acquired =
  { readonly ok: true; readonly queued: boolean } | { readonly ok: false; readonly why: SlotRefusal };

interface Waiter {
  readonly nsKey: string;
  readonly userKey: string;
  readonly settle: (result: Acquired) => void;
}

/** Requesters whose last service time is kept (the least recently served are forgotten first). */
const SERVED_MEMORY = 1_024;

const keysOf = (r: Requester) => ({ nsKey: `namespace:${r.namespace}`, userKey: `user:${r.user}` });

export class LookupSlots {
  private active = 0;
  /** In arrival order. */
  private readonly waiting: Waiter[] = [];
  /** Waiters per namespace key and per user key. */
  private readonly waitingBy = new Map<string, number>();
  /** When each key was last given a slot (a Map re-inserted on use: least recently served first). */
  private readonly served = new Map<string, number>();
  private tick = 0;

  constructor(
    private readonly concurrency: number,
    private readonly queueMax: number,
    private readonly shareMax: number,
  ) {}

  /** Resolves with a slot taken, or why not: a share or the queue full, pushed out, or `signal` aborted first. */
  acquire(signal: AbortSignal, requester: Requester): Promise<Acquired> {
    const { nsKey, userKey } = keysOf(requester);
    if (this.active < this.concurrency) {
      this.active++;
      this.markServed(nsKey, userKey);
      return Promise.resolve({ ok: true, queued: false });
    }
    if (this.count(nsKey) >= this.shareMax) return Promise.resolve({ ok: false, why: 'namespace-share' });
    if (this.count(userKey) >= this.shareMax) return Promise.resolve({ ok: false, why: 'user-share' });
    if (this.waiting.length >= this.queueMax && !this.pushOutFor(nsKey, userKey))
      return Promise.resolve({ ok: false, why: 'queue-full' });
    return new Promise<Acquired>((resolve) => {
      const waiter: Waiter = {
        nsKey,
        userKey,
        settle: (result) => {
          signal.removeEventListener('abort', giveUp);
          resolve(result);
        },
      };
      const giveUp = (): void => {
        this.remove(waiter);
        resolve({ ok: false, why: 'slot-timeout' });
      };
      this.waiting.push(waiter);
      this.adjust(waiter, 1);
      signal.addEventListener('abort', giveUp, { once: true });
    });
  }

  release(): void {
    this.active--;
    const next = this.next();
    if (!next) return;
    this.remove(next);
    this.active++;
    this.markServed(next.nsKey, next.userKey);
    next.settle({ ok: true, queued: true });
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  private count(key: string): number {
    return this.waitingBy.get(key) ?? 0;
  }

  private adjust(w: Waiter, by: number): void {
    for (const key of [w.nsKey, w.userKey]) {
      const n = this.count(key) + by;
      if (n > 0) this.waitingBy.set(key, n);
      else this.waitingBy.delete(key);
    }
  }

  private remove(w: Waiter): void {
    const i = this.waiting.indexOf(w);
    if (i < 0) return;
    this.waiting.splice(i, 1);
    this.adjust(w, -1);
  }

  private markServed(nsKey: string, userKey: string): void {
    this.tick++;
    for (const key of [nsKey, userKey]) {
      this.served.delete(key);
      this.served.set(key, this.tick);
    }
    while (this.served.size > SERVED_MEMORY) this.served.delete(this.served.keys().next().value as string);
  }

  /** The waiter whose namespace and user were both served least recently; the earliest between equals. */
  private next(): Waiter | undefined {
    let best: Waiter | undefined;
    let bestAt = Infinity;
    for (const w of this.waiting) {
      const at = Math.max(this.served.get(w.nsKey) ?? 0, this.served.get(w.userKey) ?? 0);
      if (at < bestAt) {
        best = w;
        bestAt = at;
      }
    }
    return best;
  }

  /** Makes room for a newcomer at the expense of the busiest namespace or user; false when it has no more than the newcomer's. */
  private pushOutFor(nsKey: string, userKey: string): boolean {
    let busiest: string | undefined;
    let most = 0;
    for (const [key, n] of this.waitingBy)
      if (n > most) {
        busiest = key;
        most = n;
      }
    const own = Math.max(this.count(nsKey), this.count(userKey)) + 1;
    if (busiest === undefined || most <= own) return false;
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const w = this.waiting[i]!;
      if (w.nsKey === busiest || w.userKey === busiest) {
        this.remove(w);
        w.settle({ ok: false, why: 'pushed-out' });
        return true;
      }
    }
    return false;
  }
}
