/**
 * The slots of the allocated-IP lookups (src/cluster/ip-lookup-slots.ts):
 * `concurrency` GETs at once, at most `queueMax` waiting behind them, first
 * come first served, and a waiter that gives up when its review's deadline
 * passes leaves the queue at once.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LookupSlots } from '../../src/cluster/ip-lookup-slots.js';

/** Whether a promise has settled yet, without waiting for it. */
async function settled<T>(p: Promise<T>): Promise<{ done: boolean; value?: T }> {
  const pending = Symbol('pending');
  const value = await Promise.race([p, Promise.resolve(pending)]);
  return value === pending ? { done: false } : { done: true, value: value as T };
}

const never = (): AbortSignal => new AbortController().signal;

describe('allocated-IP lookup slots', () => {
  it('grants exactly `concurrency` slots at once, then queues', async () => {
    const slots = new LookupSlots(2, 5);
    expect(await slots.acquire(never())).toBe(true);
    expect(await slots.acquire(never())).toBe(true);
    expect(slots.inFlight).toBe(2);
    const third = slots.acquire(never());
    expect(await settled(third)).toEqual({ done: false });
    expect(slots.queued).toBe(1);
    expect(slots.inFlight).toBe(2);
  });

  it('refuses at once when `queueMax` are already waiting', async () => {
    const slots = new LookupSlots(1, 2);
    await slots.acquire(never());
    const waiting = [slots.acquire(never()), slots.acquire(never())];
    expect(slots.queued).toBe(2);
    expect(await slots.acquire(never())).toBe(false);
    expect(slots.queued).toBe(2);
    for (const w of waiting) expect(await settled(w)).toEqual({ done: false });
  });

  it('a released slot goes to the longest waiter, and the count of slots in use stays right', async () => {
    const slots = new LookupSlots(1, 5);
    await slots.acquire(never());
    const first = slots.acquire(never());
    const second = slots.acquire(never());
    slots.release();
    expect(await settled(first)).toEqual({ done: true, value: true });
    expect(await settled(second)).toEqual({ done: false });
    expect(slots.inFlight).toBe(1);
    expect(slots.queued).toBe(1);
    slots.release();
    expect(await second).toBe(true);
    slots.release();
    expect(slots.inFlight).toBe(0);
    expect(slots.queued).toBe(0);
  });

  it('a waiter whose deadline passes gives up at once and leaves the queue; the next release skips it', async () => {
    const slots = new LookupSlots(1, 5);
    await slots.acquire(never());
    const deadline = new AbortController();
    const gaveUp = slots.acquire(deadline.signal);
    const later = slots.acquire(never());
    deadline.abort();
    expect(await gaveUp).toBe(false);
    expect(slots.queued).toBe(1);
    slots.release();
    expect(await later).toBe(true);
    expect(slots.inFlight).toBe(1);
  });

  it('a waiter that gives up takes only itself out of the queue, whatever its place', async () => {
    const slots = new LookupSlots(1, 5);
    await slots.acquire(never());
    const deadlines = [new AbortController(), new AbortController(), new AbortController()];
    const waits = deadlines.map((d) => slots.acquire(d.signal));
    deadlines[1]!.abort();
    expect(await waits[1]).toBe(false);
    slots.release();
    expect(await settled(waits[0]!)).toEqual({ done: true, value: true });
    expect(await settled(waits[2]!)).toEqual({ done: false });
    slots.release();
    expect(await waits[2]).toBe(true);
  });

  // A review's signal can outlive its lookup (the review goes on to other
  // checks): a granted waiter must not leave its listener on it.
  it('a waiter that got its slot no longer listens to its deadline', async () => {
    const slots = new LookupSlots(1, 5);
    await slots.acquire(never());
    const deadline = new AbortController();
    const wait = slots.acquire(deadline.signal);
    expect(getEventListeners(deadline.signal, 'abort')).toHaveLength(1);
    slots.release();
    expect(await wait).toBe(true);
    expect(getEventListeners(deadline.signal, 'abort')).toHaveLength(0);
    deadline.abort();
    expect(slots.inFlight).toBe(1);
  });
});
