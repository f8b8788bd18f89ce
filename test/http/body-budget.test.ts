/**
 * The request-body budget (src/http/body-budget.ts) on its own, with a clock
 * of vitest's: what fits beside what is in flight (the budget, the small
 * lane above it, one body alone whatever its size), the order waiters are
 * admitted in, a wait that times out, and what `observe` and `timedOut` are
 * told. The server's use of it is in body-reader.test.ts and the reliability
 * suites; these tests run inside the mutation subset.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createBodyBudget, type Release } from '../../src/http/body-budget.js';

/** Budget 100 bytes; bodies up to 10 bytes may use 50 bytes more. */
const LIMITS = { budgetBytes: 100, smallBytes: 10, smallLaneBytes: 50 };

function budget() {
  const observed: [number, number][] = [];
  let timeouts = 0;
  const b = createBodyBudget(
    LIMITS,
    (inFlight, waiting) => observed.push([inFlight, waiting]),
    () => timeouts++,
  );
  return { b, observed, timeouts: () => timeouts };
}

/** Queues `bytes`; what the grant was called with (a release, or undefined at the timeout). */
function queued(b: ReturnType<typeof budget>['b'], bytes: number, waitMs = 1_000) {
  const grants: (Release | undefined)[] = [];
  b.acquire(bytes, waitMs, (release) => grants.push(release));
  return grants;
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('what fits', () => {
  it('one body always goes alone, even over the whole budget and lane', () => {
    const { b } = budget();
    const release = b.tryAcquire(1_000);
    expect(release).toBeTypeOf('function');
    expect(b.inFlight()).toBe(1_000);
    release!();
    expect(b.inFlight()).toBe(0);
  });

  it('a large body fits up to the budget exactly, not one byte over', () => {
    const { b } = budget();
    b.tryAcquire(60);
    expect(b.tryAcquire(41)).toBeUndefined();
    expect(b.tryAcquire(40)).toBeTypeOf('function');
    expect(b.inFlight()).toBe(100);
  });

  it('a small body (up to smallBytes, inclusive) may use the lane above the budget, up to its end exactly', () => {
    const { b } = budget();
    b.tryAcquire(140);
    // 11 bytes is not small: only the budget counts, and 140 is over it.
    expect(b.tryAcquire(11)).toBeUndefined();
    expect(b.tryAcquire(10)).toBeTypeOf('function');
    expect(b.inFlight()).toBe(150);
    expect(b.tryAcquire(1)).toBeUndefined();
  });

  it('a release counts once, however often it is called', () => {
    const { b } = budget();
    const first = b.tryAcquire(30)!;
    b.tryAcquire(20);
    first();
    first();
    expect(b.inFlight()).toBe(20);
  });

  it('observe is told the bytes in flight after a grant at once and after a release; a refusal tells it nothing', () => {
    const { b, observed } = budget();
    const release = b.tryAcquire(70)!;
    expect(b.tryAcquire(50)).toBeUndefined();
    release();
    expect(observed).toEqual([
      [70, 0],
      [0, 0],
    ]);
  });
});

describe('waiting', () => {
  it('a body that does not fit waits, then is granted when a release makes room', () => {
    const { b, observed } = budget();
    const release = b.tryAcquire(70)!;
    const grants = queued(b, 50);
    expect([grants, b.waiting(), b.inFlight()]).toEqual([[], 1, 70]);
    release();
    expect(grants).toHaveLength(1);
    expect(grants[0]).toBeTypeOf('function');
    expect([b.waiting(), b.inFlight()]).toEqual([0, 50]);
    // Queued (70 in flight, 1 waiting), then the release: 50 in flight, none waiting.
    expect(observed).toEqual([
      [70, 0],
      [70, 1],
      [50, 0],
    ]);
    // The granted release frees its bytes.
    grants[0]!();
    expect(b.inFlight()).toBe(0);
    // Its timer was cleared: the wait's end changes nothing.
    vi.advanceTimersByTime(5_000);
    expect([grants.length, b.inFlight()]).toEqual([1, 0]);
  });

  it('acquire grants at once, synchronously, when the body fits', () => {
    const { b } = budget();
    const grants = queued(b, 30);
    expect(grants).toHaveLength(1);
    expect(b.inFlight()).toBe(30);
    expect(b.waiting()).toBe(0);
  });

  it('one release admits every waiter that then fits, in order of arrival', () => {
    const { b } = budget();
    const big = b.tryAcquire(100)!;
    const a = queued(b, 40);
    const c = queued(b, 30);
    const d = queued(b, 40);
    expect(b.waiting()).toBe(3);
    big();
    // 40 + 30 fit the 100 bytes; the second 40 does not.
    expect([a.length, c.length, d.length]).toEqual([1, 1, 0]);
    expect([b.inFlight(), b.waiting()]).toEqual([70, 1]);
    a[0]!();
    expect(d).toHaveLength(1);
    expect([b.inFlight(), b.waiting()]).toEqual([70, 0]);
  });

  it('a small body passes a large waiter that does not fit yet; the large one keeps its place', () => {
    const { b } = budget();
    const held = b.tryAcquire(80)!;
    const large = queued(b, 60);
    const small = queued(b, 10);
    // The small one fitted its lane at once, even with the large one queued ahead.
    expect([large.length, small.length]).toEqual([0, 1]);
    held();
    expect(large).toHaveLength(1);
    expect(b.inFlight()).toBe(70);
  });

  it('a large body does not jump the queue, even when it would fit now', () => {
    const { b } = budget();
    const held = b.tryAcquire(60)!;
    const first = queued(b, 50);
    // 30 would fit beside the 60, but a body is waiting ahead of it.
    expect(b.tryAcquire(30)).toBeUndefined();
    const second = queued(b, 30);
    expect([first.length, second.length, b.waiting()]).toEqual([0, 0, 2]);
    held();
    expect([first.length, second.length, b.inFlight()]).toEqual([1, 1, 80]);
  });

  it('a small body waits when its lane is full too, and then goes before a large waiter if only it fits', () => {
    const { b } = budget();
    b.tryAcquire(90);
    // Six small bodies fill the lane: 150 in flight.
    const smalls = [1, 2, 3, 4, 5, 6].map(() => b.tryAcquire(10)!);
    const large = queued(b, 60);
    const small = queued(b, 10);
    expect([large.length, small.length, b.waiting(), b.inFlight()]).toEqual([0, 0, 2, 150]);
    // One small body done: the large one still does not fit, the small one does (150 of 150).
    smalls[0]!();
    expect([large.length, small.length, b.inFlight(), b.waiting()]).toEqual([0, 1, 150, 1]);
  });

  it('a wait that times out leaves the queue, tells observe and timedOut, and grants undefined', () => {
    const { b, observed, timeouts } = budget();
    b.tryAcquire(90);
    const late = queued(b, 50, 200);
    const other = queued(b, 60, 10_000);
    expect(b.waiting()).toBe(2);
    vi.advanceTimersByTime(199);
    expect([late, timeouts()]).toEqual([[], 0]);
    vi.advanceTimersByTime(1);
    expect(late).toEqual([undefined]);
    expect(timeouts()).toBe(1);
    expect(b.waiting()).toBe(1);
    expect(observed.at(-1)).toEqual([90, 1]);
    // The one still waiting is the other one: it is the one a release admits.
    expect(other).toEqual([]);
    expect(b.inFlight()).toBe(90);
  });

  it('a timed-out waiter is not granted later by a release', () => {
    const { b } = budget();
    const held = b.tryAcquire(90)!;
    const late = queued(b, 50, 100);
    vi.advanceTimersByTime(100);
    held();
    expect(late).toEqual([undefined]);
    expect([b.inFlight(), b.waiting()]).toEqual([0, 0]);
  });

  it('the wait does not keep the process alive (its timer is unref’d)', () => {
    vi.useRealTimers();
    const { b } = budget();
    b.tryAcquire(90);
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    queued(b, 50, 60_000);
    const after = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    expect(after).toBe(before);
  });
});
