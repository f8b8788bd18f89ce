/**
 * The slots of the allocated-IP lookups (src/inputs/allocations/ip-lookup-slots.ts):
 * `concurrency` GETs at once, at most `queueMax` waiting behind them, first
 * come first served, and a waiter that gives up when its review's deadline
 * passes leaves the queue at once.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  LookupSlots,
  NO_REQUESTER,
  type Requester,
} from '../../../src/inputs/allocations/ip-lookup-slots.js';

/** Whether a promise has settled yet, without waiting for it. */
async function settled<T>(p: Promise<T>): Promise<{ done: boolean; value?: T }> {
  const pending = Symbol('pending');
  const value = await Promise.race([p, Promise.resolve(pending)]);
  return value === pending ? { done: false } : { done: true, value: value as T };
}

const never = (): AbortSignal => new AbortController().signal;
const A = NO_REQUESTER;
const OK = { ok: true, queued: false };
const QUEUED = { ok: true, queued: true };

describe('allocated-IP lookup slots', () => {
  it('grants exactly `concurrency` slots at once, then queues', async () => {
    const slots = new LookupSlots(2, 5, 5);
    expect(await slots.acquire(never(), A)).toEqual(OK);
    expect(await slots.acquire(never(), A)).toEqual(OK);
    expect(slots.inFlight).toBe(2);
    const third = slots.acquire(never(), A);
    expect(await settled(third)).toEqual({ done: false });
    expect(slots.queued).toBe(1);
    expect(slots.inFlight).toBe(2);
  });

  it('refuses at once when `queueMax` are already waiting', async () => {
    const slots = new LookupSlots(1, 2, 10);
    await slots.acquire(never(), A);
    const waiting = [slots.acquire(never(), A), slots.acquire(never(), A)];
    expect(slots.queued).toBe(2);
    expect(await slots.acquire(never(), A)).toEqual({ ok: false, why: 'queue-full' });
    expect(slots.queued).toBe(2);
    for (const w of waiting) expect(await settled(w)).toEqual({ done: false });
  });

  it('a released slot goes to the longest waiter, and the count of slots in use stays right', async () => {
    const slots = new LookupSlots(1, 5, 5);
    await slots.acquire(never(), A);
    const first = slots.acquire(never(), A);
    const second = slots.acquire(never(), A);
    slots.release();
    expect(await settled(first)).toEqual({ done: true, value: QUEUED });
    expect(await settled(second)).toEqual({ done: false });
    expect(slots.inFlight).toBe(1);
    expect(slots.queued).toBe(1);
    slots.release();
    expect(await second).toEqual(QUEUED);
    slots.release();
    expect(slots.inFlight).toBe(0);
    expect(slots.queued).toBe(0);
  });

  it('a waiter whose deadline passes gives up at once and leaves the queue; the next release skips it', async () => {
    const slots = new LookupSlots(1, 5, 5);
    await slots.acquire(never(), A);
    const deadline = new AbortController();
    const gaveUp = slots.acquire(deadline.signal, A);
    const later = slots.acquire(never(), A);
    deadline.abort();
    expect(await gaveUp).toEqual({ ok: false, why: 'slot-timeout' });
    expect(slots.queued).toBe(1);
    slots.release();
    expect(await later).toEqual(QUEUED);
    expect(slots.inFlight).toBe(1);
  });

  it('a waiter that gives up takes only itself out of the queue, whatever its place', async () => {
    const slots = new LookupSlots(1, 5, 5);
    await slots.acquire(never(), A);
    const deadlines = [new AbortController(), new AbortController(), new AbortController()];
    const waits = deadlines.map((d) => slots.acquire(d.signal, A));
    deadlines[1]!.abort();
    expect(await waits[1]).toEqual({ ok: false, why: 'slot-timeout' });
    slots.release();
    expect(await settled(waits[0]!)).toEqual({ done: true, value: QUEUED });
    expect(await settled(waits[2]!)).toEqual({ done: false });
    slots.release();
    expect(await waits[2]).toEqual(QUEUED);
  });

  // A review's signal can outlive its lookup (the review goes on to other
  // checks): a granted waiter must not leave its listener on it.
  it('a waiter that got its slot no longer listens to its deadline', async () => {
    const slots = new LookupSlots(1, 5, 5);
    await slots.acquire(never(), A);
    const deadline = new AbortController();
    const wait = slots.acquire(deadline.signal, A);
    expect(getEventListeners(deadline.signal, 'abort')).toHaveLength(1);
    slots.release();
    expect(await wait).toEqual(QUEUED);
    expect(getEventListeners(deadline.signal, 'abort')).toHaveLength(0);
    deadline.abort();
    expect(slots.inFlight).toBe(1);
  });
});

describe('allocated-IP lookup slots, shared fairly between requesters', () => {
  const who = (namespace: string, user: string): Requester => ({ namespace, user });
  const MALLORY = who('attack', 'mallory');
  const ALICE = who('apps', 'alice');

  /** One slot, taken by `holder`, with `n` waiters of `flood` behind it. */
  function flooded(n: number, flood: Requester, queueMax = 64, shareMax = 16) {
    const slots = new LookupSlots(1, queueMax, shareMax);
    void slots.acquire(never(), flood);
    const waits = Array.from({ length: n }, () => slots.acquire(never(), flood));
    return { slots, waits };
  }

  it('refuses a namespace, or a user, its lookups past its share, while others still queue', async () => {
    const { slots } = flooded(3, MALLORY, 64, 3);
    expect(await slots.acquire(never(), MALLORY)).toEqual({ ok: false, why: 'namespace-share' });
    // The same user from another namespace: still the same user's share.
    expect(await slots.acquire(never(), who('attack-2', 'mallory'))).toEqual({
      ok: false,
      why: 'user-share',
    });
    // Another user in the same namespace: the namespace's share.
    expect(await slots.acquire(never(), who('attack', 'eve'))).toEqual({ ok: false, why: 'namespace-share' });
    const alice = slots.acquire(never(), ALICE);
    expect(await settled(alice)).toEqual({ done: false });
    expect(slots.queued).toBe(4);
  });

  it('gives a freed slot to the requester served least recently, ahead of a flood that came first', async () => {
    const { slots, waits } = flooded(5, MALLORY);
    const alice = slots.acquire(never(), ALICE);
    slots.release();
    expect(await settled(alice)).toEqual({ done: true, value: QUEUED });
    for (const w of waits) expect(await settled(w)).toEqual({ done: false });
    // Then the flood again, first come first served among its own.
    slots.release();
    expect(await settled(waits[0]!)).toEqual({ done: true, value: QUEUED });
  });

  it('a flood from one user over many namespaces is one flood', async () => {
    const slots = new LookupSlots(1, 64, 16);
    void slots.acquire(never(), who('ns-0', 'mallory'));
    const waits = Array.from({ length: 8 }, (_, i) => slots.acquire(never(), who(`ns-${i + 1}`, 'mallory')));
    const alice = slots.acquire(never(), ALICE);
    slots.release();
    expect(await settled(alice)).toEqual({ done: true, value: QUEUED });
    for (const w of waits) expect(await settled(w)).toEqual({ done: false });
  });

  it('with the queue full, a newcomer pushes out the newest waiter of the busiest requester', async () => {
    const slots = new LookupSlots(1, 6, 4);
    void slots.acquire(never(), MALLORY);
    const mallory = Array.from({ length: 4 }, () => slots.acquire(never(), MALLORY));
    const eve = [
      slots.acquire(never(), who('attack-2', 'eve')),
      slots.acquire(never(), who('attack-2', 'eve')),
    ];
    expect(slots.queued).toBe(6);
    const alice = slots.acquire(never(), ALICE);
    expect(await settled(mallory[3]!)).toEqual({ done: true, value: { ok: false, why: 'pushed-out' } });
    for (const w of [...mallory.slice(0, 3), ...eve]) expect(await settled(w)).toEqual({ done: false });
    expect(slots.queued).toBe(6);
    // Eve and Alice were never served: first come first served between them, then the flood.
    slots.release();
    expect(await settled(eve[0]!)).toEqual({ done: true, value: QUEUED });
    slots.release();
    expect(await settled(alice)).toEqual({ done: true, value: QUEUED });
    expect(await settled(mallory[0]!)).toEqual({ done: false });
  });

  it('with the queue full of equals, a newcomer is refused rather than push out its equal', async () => {
    const slots = new LookupSlots(1, 2, 1);
    void slots.acquire(never(), MALLORY);
    const a = slots.acquire(never(), who('a', 'a'));
    const b = slots.acquire(never(), who('b', 'b'));
    expect(await slots.acquire(never(), who('c', 'c'))).toEqual({ ok: false, why: 'queue-full' });
    for (const w of [a, b]) expect(await settled(w)).toEqual({ done: false });
  });
});
