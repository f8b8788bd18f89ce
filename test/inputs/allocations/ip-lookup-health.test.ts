/**
 * The allocated-IP lookups' health: the state and gauge, the last error and
 * since when, one log line per change, and the probe schedule while lookups
 * fail (fake clock and timers, a fixed jitter: no waiting).
 */
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { LookupHealth, type LookupState } from '../../../src/inputs/allocations/ip-lookup-health.js';
import { allocationLookupMetrics } from '../../../src/inputs/allocations/ip-lookup-metrics.js';
import { fakeClockAt } from '../../kit/fake-clock.js';
import { capturingLogger } from '../../kit/helpers.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const E1 = { reason: 'HTTP 503 from the API server', detail: 'busy' };
const E2 = { reason: 'API server unreachable (ECONNREFUSED)', detail: 'connect ECONNREFUSED' };

// No jitter unless a test says otherwise.
fakeClockAt(T0);

function healthWith(probeIntervalMs = 10_000) {
  const { logger, lines } = capturingLogger();
  const metrics = allocationLookupMetrics(new Registry());
  let probes = 0;
  const health = new LookupHealth(
    logger,
    metrics,
    { intervalMs: probeIntervalMs, random: () => Math.random() },
    () => {
      probes++;
      return Promise.resolve();
    },
  );
  const up = async () => (await metrics.up.get()).values[0]?.value;
  /** The number of probes started after `ms` more milliseconds. */
  const probesAfter = (ms: number) => {
    vi.advanceTimersByTime(ms);
    return probes;
  };
  return { health, lines, up, probesAfter, probes: () => probes };
}

/** How long until the next probe starts (the fake clock moves to the next timer); throws if none is pending. */
function nextWait(h: ReturnType<typeof healthWith>): number {
  const before = h.probes();
  const start = Date.now();
  vi.advanceTimersToNextTimer();
  if (h.probes() === before) throw new Error('no probe pending');
  return Date.now() - start;
}

describe('lookup health state', () => {
  it.each<[LookupState, number]>([
    ['ok', 1],
    ['unavailable', 0],
    ['absent', 0],
  ])('"%s" shows as lookup_up %i', async (state, gauge) => {
    const h = healthWith();
    h.health.set(state, state === 'unavailable' ? E1 : undefined);
    expect(h.health.state).toBe(state);
    expect(await h.up()).toBe(gauge);
  });

  it('an answer records when, and clears the last error', () => {
    const h = healthWith();
    h.health.set('unavailable', E1);
    vi.setSystemTime(T0 + 5_000);
    h.health.set('ok');
    expect(h.health.lastSuccess).toBe(iso(5_000));
    expect(h.health.lastError).toBeUndefined();
  });

  it('an outage keeps the time it started while its reason changes; the next outage starts afresh', () => {
    const h = healthWith();
    h.health.set('unavailable', E1);
    expect(h.health.lastError).toEqual({ ...E1, since: iso(0) });
    vi.setSystemTime(T0 + 3_000);
    h.health.set('unavailable', E2);
    expect(h.health.lastError).toEqual({ ...E2, since: iso(0) });
    vi.setSystemTime(T0 + 6_000);
    h.health.set('ok');
    vi.setSystemTime(T0 + 9_000);
    h.health.set('unavailable', E1);
    expect(h.health.lastError).toEqual({ ...E1, since: iso(9_000) });
  });

  it('an outage after the API was found absent starts at its own time', () => {
    const h = healthWith();
    h.health.set('unavailable', E1);
    vi.setSystemTime(T0 + 2_000);
    h.health.set('absent');
    // Absent records no error of its own: the last one stays for /readyz.
    expect(h.health.lastError).toEqual({ ...E1, since: iso(0) });
    vi.setSystemTime(T0 + 4_000);
    h.health.set('unavailable', E2);
    expect(h.health.lastError).toEqual({ ...E2, since: iso(4_000) });
  });

  it('an absent API is no error', () => {
    const h = healthWith();
    h.health.set('absent');
    expect(h.health.lastError).toBeUndefined();
    expect(h.health.lastSuccess).toBeUndefined();
  });

  it('keeps the Retry-After the API server asked for with the error', () => {
    const h = healthWith();
    h.health.set('unavailable', { ...E1, retryAfterMs: 7_000 });
    expect(h.health.lastError).toEqual({ ...E1, retryAfterMs: 7_000, since: iso(0) });
  });
});

describe('lookup health log', () => {
  const FAIL =
    'allocated-IP lookups fail: Cluster addresses are allowed unchecked, with a warning, until the API server answers';
  const ABSENT =
    'the cluster serves no IPAddress API (networking.k8s.io/v1, Kubernetes 1.33+): the ClusterAddressAllocated rule is skipped';
  const AGAIN = 'allocated-IP lookups answer again';

  it.each<[string, [LookupState, typeof E1?][], { level: number; msg: string }[]]>([
    ['the first answer says nothing', [['ok']], []],
    [
      'a failure warns once, with its reason',
      [
        ['unavailable', E1],
        ['unavailable', E2],
      ],
      [{ level: 40, msg: FAIL }],
    ],
    ['an absent API warns once', [['absent'], ['absent']], [{ level: 40, msg: ABSENT }]],
    [
      'answers after a failure are said once',
      [['ok'], ['unavailable', E1], ['ok'], ['ok']],
      [
        { level: 40, msg: FAIL },
        { level: 30, msg: AGAIN },
      ],
    ],
    [
      'answers after an absent API are said too',
      [['absent'], ['ok']],
      [
        { level: 40, msg: ABSENT },
        { level: 30, msg: AGAIN },
      ],
    ],
  ])('%s', (_what, steps, expected) => {
    const h = healthWith();
    for (const [state, error] of steps) h.health.set(state, error);
    expect(h.lines.map(({ level, msg }) => ({ level, msg }))).toEqual(expected);
  });

  it('the failure warning carries the reason and detail', () => {
    const h = healthWith();
    h.health.set('unavailable', E1);
    expect(h.lines[0]).toMatchObject({ reason: E1.reason, detail: E1.detail });
  });
});

describe('lookup health probe schedule', () => {
  it('no probe while lookups answer or before anything was asked', () => {
    const h = healthWith();
    expect(h.health.state).toBe('unknown');
    expect(h.probesAfter(60_000)).toBe(0);
    h.health.set('ok');
    h.health.probed(false);
    expect(h.probesAfter(60_000)).toBe(0);
  });

  it('after a failure, probes 1 s later; failed probes in a row wait 1, 2, 4, 8 s, up to the interval', () => {
    const h = healthWith(5_000);
    h.health.set('unavailable', E1);
    expect(nextWait(h)).toBe(1_000);
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      h.health.set('unavailable', E1);
      h.health.probed(true);
      waits.push(nextWait(h));
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
  });

  it('a successful probe starts the waits over', () => {
    const h = healthWith();
    h.health.set('unavailable', E1);
    for (let i = 0; i < 3; i++) {
      nextWait(h);
      h.health.probed(true);
    }
    expect(nextWait(h)).toBe(4_000);
    h.health.set('ok');
    h.health.probed(false);
    h.health.set('unavailable', E1);
    expect(nextWait(h)).toBe(1_000);
  });

  it('while the API is absent, probes with the same growing waits', () => {
    const h = healthWith();
    h.health.set('absent');
    const waits = [nextWait(h)];
    for (let i = 0; i < 3; i++) {
      h.health.probed(true);
      waits.push(nextWait(h));
    }
    expect(waits).toEqual([1_000, 1_000, 2_000, 4_000]);
  });

  it.each([
    { random: 0, wait: 800 },
    { random: 0.25, wait: 900 },
    { random: 0.75, wait: 1_100 },
    { random: 0.999, wait: 1_200 },
  ])('jitters each wait by ±20 %: random() $random waits $wait ms', ({ random, wait }) => {
    vi.mocked(Math.random).mockReturnValue(random);
    const h = healthWith();
    h.health.set('unavailable', E1);
    expect(nextWait(h)).toBe(wait);
  });

  it('waits at least the Retry-After the API server asked for, and no longer once it has passed', () => {
    const h = healthWith();
    h.health.set('unavailable', { ...E1, retryAfterMs: 3_500 });
    expect(nextWait(h)).toBe(3_500);
    h.health.set('unavailable', { ...E1, retryAfterMs: 200 });
    h.health.probed(true);
    expect(nextWait(h)).toBe(1_000);
  });

  it('keeps one probe pending, however often the state is set meanwhile', () => {
    const h = healthWith();
    h.health.set('unavailable', E1);
    h.health.set('unavailable', E2);
    h.health.probed(true);
    expect(h.probesAfter(60_000)).toBe(1);
  });

  it('the pending probe does not keep the process alive', () => {
    const h = healthWith();
    const timers: NodeJS.Timeout[] = [];
    const fake = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms: number) => {
      const t = fake(fn, ms);
      timers.push(t);
      return t;
    }) as typeof setTimeout);
    try {
      h.health.set('unavailable', E1);
    } finally {
      spy.mockRestore();
    }
    expect(timers).toHaveLength(1);
    expect(timers[0]!.hasRef()).toBe(false);
  });

  it('close() cancels the pending probe and schedules no other', () => {
    const h = healthWith();
    h.health.set('unavailable', E1);
    expect(h.health.isClosed).toBe(false);
    h.health.close();
    expect(h.health.isClosed).toBe(true);
    expect(h.probesAfter(60_000)).toBe(0);
    h.health.set('unavailable', E2);
    h.health.probed(true);
    expect(h.probesAfter(60_000)).toBe(0);
  });
});
