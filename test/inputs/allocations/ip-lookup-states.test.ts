/**
 * The allocated-IP lookup around its GETs: the defaults, what /readyz?verbose
 * and the metrics show in each state, the words a failure leaves, the probe's
 * schedule during an outage, and close(). A scripted getter, fake timers and
 * a fixed jitter: no HTTP, no waiting.
 */
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import type { GetResult, IPAddressGetter } from '../../../src/inputs/allocations/ip-get.js';
import { createAllocationLookup, type LookupOptions } from '../../../src/inputs/allocations/ip-lookup.js';
import { allocationLookupMetrics } from '../../../src/inputs/allocations/ip-lookup-metrics.js';
import { fakeClockAt } from '../../kit/fake-clock.js';
import { capturingLogger } from '../../kit/helpers.js';

type Answer = (name: string, signal: AbortSignal) => Promise<GetResult>;

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const SERVICE = { group: '', resource: 'services', namespace: 'a', name: 's' };

const free: Answer = () => Promise.resolve({ kind: 'free' });
const held: Answer = () => Promise.resolve({ kind: 'held', holder: SERVICE });
const absent: Answer = () => Promise.resolve({ kind: 'absent' });
const failing: Answer = () =>
  Promise.resolve({ kind: 'error', reason: 'HTTP 503 from the API server', detail: 'busy' });
/** Like the real client: rejects once the lookup's deadline (or close) aborts the request. */
const untilAborted: Answer = (_name, signal) =>
  new Promise((_resolve, reject) =>
    signal.addEventListener('abort', () =>
      setImmediate(() => reject(new Error('This operation was aborted'))),
    ),
  );

/** Lets every pending promise chain run (setImmediate is not faked). */
const settle = async () => {
  for (let i = 0; i < 3; i++) await new Promise<void>((r) => setImmediate(r));
};

function scriptedGetter(first: Answer = free) {
  const asked: { name: string; at: number; signal: AbortSignal }[] = [];
  let answer = first;
  let closed = 0;
  const get: IPAddressGetter = {
    get: (name, signal) => {
      asked.push({ name, at: Date.now(), signal });
      return answer(name, signal);
    },
    close: () => {
      closed++;
    },
  };
  return {
    get,
    asked,
    names: () => asked.map((a) => a.name),
    answer: (next: Answer) => (answer = next),
    closed: () => closed,
  };
}

function start(
  s: ReturnType<typeof scriptedGetter>,
  /** null: the defaults. */
  options: Partial<LookupOptions> | null = { probeAtStart: false },
) {
  const { logger, lines } = capturingLogger();
  const registry = new Registry();
  // Not 0: a duration computed from the wrong end of the clock would show.
  let clock = 10_000;
  const lookup = createAllocationLookup({
    get: s.get,
    logger,
    metrics: allocationLookupMetrics(registry),
    ...(options ? { options } : {}),
    now: () => clock,
  });
  return { lookup, lines, registry, tick: (ms: number) => (clock += ms) };
}

fakeClockAt(T0);

describe('allocation lookup defaults', () => {
  it('probes 0.0.0.0 at start, answers within 1 s, keeps 1,000 answers for 5 s', async () => {
    const s = scriptedGetter();
    const { lookup } = start(s, null);
    await settle();
    expect(s.names()).toEqual(['0.0.0.0']);
    expect(lookup.describe()).toEqual({
      mode: 'on-demand lookups (GET ipaddresses/<ip>)',
      state: 'ok',
      lastSuccess: iso(0),
      cache: { entries: 0, max: 1_000, ttlSeconds: 5 },
      inFlight: 0,
      queued: 0,
      timeoutSeconds: 1,
    });
    await lookup.close();
  });

  it('after a failure, reviews are answered unchecked without asking', async () => {
    const s = scriptedGetter(failing);
    const { lookup } = start(s, null);
    await settle();
    expect(lookup.state()).toBe('unavailable');
    const answers = await lookup.lookup(['10.0.0.1']);
    expect(answers.uncheckedReason?.('10.0.0.1')).toBe('HTTP 503 from the API server');
    expect(s.names()).toEqual(['0.0.0.0']);
    await lookup.close();
  });
});

describe('allocation lookup in /readyz?verbose', () => {
  it('answering: state ok, since when, no effect, no error', async () => {
    const s = scriptedGetter(held);
    const { lookup } = start(s, { probeAtStart: false, timeoutMs: 250, cacheTtlMs: 2_000, cacheMax: 3 });
    vi.setSystemTime(T0 + 1_000);
    await lookup.lookup(['10.0.0.1']);
    expect(lookup.describe()).toEqual({
      mode: 'on-demand lookups (GET ipaddresses/<ip>)',
      state: 'ok',
      lastSuccess: iso(1_000),
      cache: { entries: 1, max: 3, ttlSeconds: 2 },
      inFlight: 0,
      queued: 0,
      timeoutSeconds: 0.25,
    });
    expect(lookup.lastErrorReason()).toBeUndefined();
  });

  it('failing: unchecked with a warning, the last error and since when', async () => {
    const s = scriptedGetter(failing);
    const { lookup } = start(s, { probeAtStart: false });
    await lookup.lookup(['10.0.0.1']);
    expect(lookup.describe()).toMatchObject({
      state: 'unavailable',
      effect: 'Cluster addresses allowed unchecked, with a warning',
      lastError: { reason: 'HTTP 503 from the API server', detail: 'busy', since: iso(0) },
    });
    expect(lookup.describe()).not.toHaveProperty('lastSuccess');
    expect(lookup.lastErrorReason()).toBe('HTTP 503 from the API server');
    await lookup.close();
  });

  it('no IPAddress API: the rule is skipped, and no error is shown as current', async () => {
    const s = scriptedGetter(failing);
    const { lookup } = start(s, { probeAtStart: false });
    await lookup.lookup(['10.0.0.1']);
    s.answer(absent);
    expect(await lookup.probe()).toBe('absent');
    expect(lookup.describe()).toMatchObject({
      state: 'absent',
      effect: 'the cluster serves no IPAddress API: ClusterAddressAllocated skipped',
    });
    expect(lookup.lastErrorReason()).toBeUndefined();
    await lookup.close();
  });
});

describe('allocation lookup with no IPAddress API', () => {
  it('asks nothing for a review, and the address is neither held nor unchecked', async () => {
    const s = scriptedGetter(absent);
    const { lookup } = start(s, { probeAtStart: true });
    await settle();
    expect(lookup.state()).toBe('absent');
    const answers = await lookup.lookup(['10.0.0.1']);
    expect(answers.holderOf('10.0.0.1')).toBeUndefined();
    expect(answers.uncheckedReason?.('10.0.0.1')).toBeUndefined();
    expect(s.names()).toEqual(['0.0.0.0']);
    await lookup.close();
  });
});

describe('allocation lookup answers', () => {
  it('an address not asked about has no holder', async () => {
    const s = scriptedGetter(held);
    const { lookup } = start(s);
    const answers = await lookup.lookup(['10.0.0.1']);
    expect(answers.holderOf('10.0.0.1')).toEqual(SERVICE);
    expect(answers.holderOf('10.0.0.2')).toBeUndefined();
  });
});

describe('allocation lookup failures, as the warning and /readyz show them', () => {
  const reasonAndDetail = async (lookup: ReturnType<typeof start>['lookup'], ip: string) => ({
    unchecked: (await lookup.lookup([ip])).uncheckedReason?.(ip),
    lastError: (lookup.describe() as { lastError?: { reason: string; detail: string } }).lastError,
  });

  it.each([
    [
      'a network error, with its code',
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      'API server unreachable (ECONNRESET)',
      'read ECONNRESET',
    ],
    ['an error without a code', new Error('socket hang up'), 'API server unreachable', 'socket hang up'],
    [
      'a code that is no string',
      Object.assign(new Error('odd'), { code: null }),
      'API server unreachable',
      'odd',
    ],
    ['a rejection with nothing', undefined, 'API server unreachable', 'undefined'],
  ])('a GET that throws %s: "%s"', async (_what, thrown, reason, detail) => {
    const s = scriptedGetter(() => Promise.reject(thrown as Error));
    const { lookup } = start(s, { probeAtStart: false, askWhileUnavailable: true });
    const seen = await reasonAndDetail(lookup, '10.0.0.1');
    expect(seen.unchecked).toBe(reason);
    expect(seen.lastError).toMatchObject({ reason, detail });
    await lookup.close();
  });

  it('a GET cut off at the deadline names the deadline and the address', async () => {
    const s = scriptedGetter(untilAborted);
    const { lookup } = start(s, { probeAtStart: false, timeoutMs: 50 });
    const pending = reasonAndDetail(lookup, '10.0.0.7');
    await vi.advanceTimersByTimeAsync(50);
    await settle();
    expect(await pending).toEqual({
      unchecked: 'no answer from the API server within 0.05 s',
      lastError: {
        reason: 'no answer from the API server within 0.05 s',
        detail: 'GET ipaddresses/10.0.0.7 timed out',
        since: iso(50),
      },
    });
    await lookup.close();
  });

  // A refusal of this server's own bounds says nothing of the API server: the state stays, so a
  // flood of lookups cannot turn the check off for every review (it would, as "unavailable").
  it('a lookup that waits for a slot past its deadline says so, without marking the API server unavailable', async () => {
    // The first GET ignores its deadline and holds the only slot until released.
    let release = () => {};
    const s = scriptedGetter(() => new Promise((resolve) => (release = () => resolve({ kind: 'free' }))));
    const { lookup, lines, registry } = start(s, { probeAtStart: false, timeoutMs: 50, concurrency: 1 });
    const first = lookup.lookup(['10.0.0.1']);
    await vi.advanceTimersByTimeAsync(20);
    const second = lookup.lookup(['10.0.0.2']);
    await vi.advanceTimersByTimeAsync(50);
    expect((await second).uncheckedReason?.('10.0.0.2')).toBe('no answer from the API server within 0.05 s');
    expect(lookup.describe()).not.toHaveProperty('lastError');
    expect(lookup.state()).toBe('unknown');
    expect(lines.filter((l) => l.level === 40)).toEqual([]);
    expect(await registry.metrics()).toContain(
      'routability_webhook_allocated_ip_unchecked_reviews_total{reason="slot-timeout"} 1',
    );
    release();
    await first;
    expect(lookup.state()).toBe('ok');
    expect(s.names()).toEqual(['10.0.0.1']);
    await lookup.close();
  });

  it('a lookup beyond a full queue is unchecked at once, and the state stays', async () => {
    let release = () => {};
    const s = scriptedGetter(() => new Promise((resolve) => (release = () => resolve({ kind: 'free' }))));
    const { lookup, registry } = start(s, { probeAtStart: false, concurrency: 1, queueMax: 1 });
    const first = lookup.lookup(['10.0.0.1']);
    const second = lookup.lookup(['10.0.0.2']);
    const third = await reasonAndDetail(lookup, '10.0.0.3');
    expect(third).toEqual({ unchecked: 'too many allocated-IP lookups waiting', lastError: undefined });
    expect(await registry.metrics()).toContain(
      'routability_webhook_allocated_ip_unchecked_reviews_total{reason="queue-full"} 1',
    );
    release();
    await first;
    await settle(); // the queued lookup takes the slot and sends its GET
    release();
    await second;
    // Not marked unavailable: the next review asks again.
    const again = lookup.lookup(['10.0.0.3']);
    await settle();
    release();
    expect((await again).uncheckedReason?.('10.0.0.3')).toBeUndefined();
    expect(s.names()).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    await lookup.close();
  });
});

describe('allocation lookup metrics', () => {
  it('counts lookups and probes by result, and times each GET in seconds', async () => {
    const s = scriptedGetter(free);
    const { lookup, registry, tick } = start(s, { probeAtStart: true });
    await settle();
    s.answer((name) => {
      tick(250);
      return held(name, new AbortController().signal);
    });
    await lookup.lookup(['10.0.0.1']);
    const text = await registry.metrics();
    expect(text).toContain('routability_webhook_allocated_ip_lookups_total{kind="probe",result="free"} 1');
    expect(text).toContain('routability_webhook_allocated_ip_lookups_total{kind="lookup",result="held"} 1');
    // Two GETs: the probe took no time on the clock, the lookup 250 ms.
    expect(text).toContain('routability_webhook_allocated_ip_lookup_duration_seconds_sum 0.25');
    expect(text).toContain('routability_webhook_allocated_ip_lookup_duration_seconds_count 2');
    expect(text).toContain('routability_webhook_allocated_ip_lookup_duration_seconds_bucket{le="0.25"} 2');
    expect(text).toContain('routability_webhook_allocated_ip_lookup_duration_seconds_bucket{le="0.1"} 1');
    await lookup.close();
  });
});

describe('allocation lookup probe schedule during an outage', () => {
  /** Runs the next timer and what it starts; the times of the probes sent so far, from the first GET. */
  const probeTimes = (s: ReturnType<typeof scriptedGetter>) =>
    s.asked.filter((a) => a.name === '0.0.0.0').map((a) => a.at - T0);
  const nextTimer = async () => {
    vi.advanceTimersToNextTimer();
    await settle();
  };

  it('after a failed lookup, probes 1 s later, then 1 s, 2 s, 4 s after each failed probe', async () => {
    const s = scriptedGetter(failing);
    const { lookup } = start(s);
    await lookup.lookup(['10.0.0.1']);
    for (let i = 0; i < 4; i++) await nextTimer();
    expect(probeTimes(s)).toEqual([1_000, 2_000, 4_000, 8_000]);
    await lookup.close();
  });

  it('a probe that finds no IPAddress API backs off the same way', async () => {
    const s = scriptedGetter(absent);
    const { lookup } = start(s, { probeAtStart: true });
    await settle();
    for (let i = 0; i < 3; i++) await nextTimer();
    expect(probeTimes(s)).toEqual([0, 1_000, 3_000, 7_000]);
    await lookup.close();
  });

  it('once a probe is answered, the next outage starts again at 1 s', async () => {
    const s = scriptedGetter(failing);
    const { lookup } = start(s);
    await lookup.lookup(['10.0.0.1']);
    for (let i = 0; i < 3; i++) await nextTimer();
    s.answer(free);
    await nextTimer();
    expect(probeTimes(s)).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(lookup.state()).toBe('ok');
    s.answer(failing);
    vi.setSystemTime(T0 + 20_000);
    await lookup.lookup(['10.0.0.2']);
    await nextTimer();
    expect(probeTimes(s).at(-1)).toBe(21_000);
    await lookup.close();
  });
});

describe('allocation lookup close()', () => {
  it('aborts the GETs in flight, waits for them to end, then closes the getter, logging no failure', async () => {
    const order: string[] = [];
    // Like the real client, the GET ends a little after its abort (a later turn of the event loop).
    const s = scriptedGetter((name, signal) =>
      untilAborted(name, signal).finally(() => order.push('GET ended')),
    );
    const { lookup, lines } = start(s, { probeAtStart: false, timeoutMs: 60_000 });
    const pending = lookup.lookup(['10.0.0.1']);
    await settle();
    const signal = s.asked.at(-1)!.signal;
    const getterClose = s.get.close.bind(s.get);
    s.get.close = () => {
      order.push('getter closed');
      getterClose();
    };
    expect(signal.aborted).toBe(false);
    await lookup.close();
    expect(signal.aborted).toBe(true);
    expect(order).toEqual(['GET ended', 'getter closed']);
    // Cut off by close(), the lookup reads as one that ran out of time; a shutdown is no outage.
    expect((await pending).uncheckedReason?.('10.0.0.1')).toBe('no answer from the API server within 60 s');
    expect(lines.filter((l) => String(l.msg).startsWith('allocated-IP lookups fail'))).toHaveLength(0);
    expect(lookup.state()).toBe('unknown');
  });

  it('sends no probe once closed', async () => {
    const s = scriptedGetter(free);
    const { lookup } = start(s);
    await lookup.close();
    expect(s.closed()).toBe(1);
    expect(await lookup.probe()).toBe('unknown');
    expect(s.names()).toEqual([]);
  });

  it('a finished GET is never aborted afterwards, by its deadline or by close()', async () => {
    const s = scriptedGetter(held);
    const { lookup } = start(s, { probeAtStart: false, timeoutMs: 100 });
    await lookup.lookup(['10.0.0.1']);
    const signal = s.asked[0]!.signal;
    vi.advanceTimersByTime(1_000);
    expect(signal.aborted).toBe(false);
    await lookup.close();
    expect(signal.aborted).toBe(false);
  });
});
