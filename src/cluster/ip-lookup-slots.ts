/**
 * How many allocated-IP GETs run at once: a few slots, a bounded queue
 * behind them, and a waiter that gives up when its deadline passes, so a slow
 * API server makes lookups fail fast instead of piling up.
 */
export class LookupSlots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly queueMax: number,
  ) {}

  /** Resolves true with a slot taken, false when the queue is full or `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<boolean> {
    if (this.active < this.concurrency) {
      this.active++;
      return Promise.resolve(true);
    }
    if (this.waiting.length >= this.queueMax) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const go = (): void => {
        signal.removeEventListener('abort', giveUp);
        this.active++;
        resolve(true);
      };
      const giveUp = (): void => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(false);
      };
      this.waiting.push(go);
      signal.addEventListener('abort', giveUp, { once: true });
    });
  }

  release(): void {
    this.active--;
    this.waiting.shift()?.();
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }
}
