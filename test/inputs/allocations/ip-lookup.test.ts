/** The lookup cache and its limits, with a scripted getter and clock (no HTTP, no waiting). */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { GetResult, IPAddressGetter } from '../../../src/inputs/allocations/ip-get.js';
import { interpretAnswer } from '../../../src/inputs/allocations/ip-get.js';
import { createAllocationLookup } from '../../../src/inputs/allocations/ip-lookup.js';

function scripted(answer: (name: string) => GetResult) {
  const asked: string[] = [];
  const pending: (() => void)[] = [];
  let hold = false;
  const getter: IPAddressGetter = {
    get: (name) => {
      asked.push(name);
      const result = answer(name);
      if (!hold) return Promise.resolve(result);
      return new Promise((resolve) => pending.push(() => resolve(result)));
    },
    close: () => {},
  };
  return {
    getter,
    asked,
    holdAnswers: () => (hold = true),
    releaseAll: () => {
      hold = false;
      for (const p of pending.splice(0)) p();
    },
  };
}

const SERVICE = { group: '', resource: 'services', namespace: 'a', name: 's' };

function lookupWith(get: IPAddressGetter, options = {}) {
  let clock = 0;
  const lookup = createAllocationLookup({
    get,
    logger: pino({ level: 'silent' }),
    options: { probeAtStart: false, cacheTtlMs: 1_000, ...options },
    now: () => clock,
  });
  return { lookup, advance: (ms: number) => (clock += ms) };
}

describe('allocation lookup cache', () => {
  it('reuses an answer until the TTL passes, then asks again', async () => {
    const s = scripted(() => ({ kind: 'held', holder: SERVICE }));
    const { lookup, advance } = lookupWith(s.getter);
    expect((await lookup.lookup(['10.0.0.1'])).holderOf('10.0.0.1')).toEqual(SERVICE);
    advance(999);
    await lookup.lookup(['10.0.0.1']);
    expect(s.asked).toEqual(['10.0.0.1']);
    advance(1);
    await lookup.lookup(['10.0.0.1']);
    expect(s.asked).toEqual(['10.0.0.1', '10.0.0.1']);
  });

  it('caches "free" too, but never a failure', async () => {
    let fail = true;
    const s = scripted(() => (fail ? { kind: 'error', reason: 'HTTP 500', detail: '' } : { kind: 'free' }));
    const { lookup } = lookupWith(s.getter, { askWhileUnavailable: true });
    const failed = await lookup.lookup(['10.0.0.2']);
    expect(failed.holderOf('10.0.0.2')).toBeUndefined();
    expect(failed.uncheckedReason?.('10.0.0.2')).toBe('HTTP 500');
    fail = false;
    const free = await lookup.lookup(['10.0.0.2']);
    expect(free.uncheckedReason?.('10.0.0.2')).toBeUndefined();
    await lookup.lookup(['10.0.0.2']);
    expect(s.asked).toEqual(['10.0.0.2', '10.0.0.2']);
    expect(lookup.cacheSize()).toBe(1);
  });

  it('while lookups fail, reviews ask nothing: the probe alone asks, and lookups resume once it is answered', async () => {
    let fail = true;
    const s = scripted(() => (fail ? { kind: 'error', reason: 'HTTP 503', detail: '' } : { kind: 'free' }));
    const { lookup } = lookupWith(s.getter);
    expect((await lookup.lookup(['10.0.0.2'])).uncheckedReason?.('10.0.0.2')).toBe('HTTP 503');
    const many = Array.from({ length: 16 }, (_, i) => `10.0.1.${i}`);
    const during = await lookup.lookup(many);
    expect(many.map((ip) => during.uncheckedReason?.(ip))).toEqual(many.map(() => 'HTTP 503'));
    expect(s.asked).toEqual(['10.0.0.2']);
    fail = false;
    // The first probe comes after 1 s (±20 %).
    await new Promise((r) => setTimeout(r, 1_400));
    expect(s.asked).toEqual(['10.0.0.2', '0.0.0.0']);
    expect(lookup.state()).toBe('ok');
    expect((await lookup.lookup(['10.0.1.7'])).uncheckedReason?.('10.0.1.7')).toBeUndefined();
    expect(s.asked).toEqual(['10.0.0.2', '0.0.0.0', '10.0.1.7']);
    await lookup.close();
  });

  it('evicts the least recently used answer beyond cacheMax', async () => {
    const s = scripted(() => ({ kind: 'free' }));
    const { lookup } = lookupWith(s.getter, { cacheMax: 2 });
    await lookup.lookup(['10.0.0.1']);
    await lookup.lookup(['10.0.0.2']);
    await lookup.lookup(['10.0.0.1']); // used again: now the most recent
    await lookup.lookup(['10.0.0.3']); // evicts 10.0.0.2
    expect(lookup.cacheSize()).toBe(2);
    s.asked.length = 0;
    await lookup.lookup(['10.0.0.1', '10.0.0.3']);
    expect(s.asked).toEqual([]);
    await lookup.lookup(['10.0.0.2']);
    expect(s.asked).toEqual(['10.0.0.2']);
  });

  it('sends one GET for the same address asked by concurrent reviews', async () => {
    const s = scripted(() => ({ kind: 'held', holder: SERVICE }));
    const { lookup } = lookupWith(s.getter);
    s.holdAnswers();
    const both = Promise.all([lookup.lookup(['10.0.0.9']), lookup.lookup(['10.0.0.9'])]);
    s.releaseAll();
    const [a, b] = await both;
    expect(a.holderOf('10.0.0.9')).toEqual(SERVICE);
    expect(b.holderOf('10.0.0.9')).toEqual(SERVICE);
    expect(s.asked).toEqual(['10.0.0.9']);
  });

  it('an address the caller did not prefetch reads as unchecked, never as free', async () => {
    const s = scripted(() => ({ kind: 'free' }));
    const { lookup } = lookupWith(s.getter);
    const answers = await lookup.lookup(['10.0.0.1']);
    expect(answers.uncheckedReason?.('10.0.0.99')).toBe('not looked up');
  });
});

describe('interpretAnswer', () => {
  it('tells a missing object (free) from an unserved API (absent)', () => {
    const notFound = JSON.stringify({
      kind: 'Status',
      reason: 'NotFound',
      details: { name: '10.0.0.1' },
      code: 404,
    });
    expect(interpretAnswer('10.0.0.1', 404, notFound)).toEqual({ kind: 'free' });
    expect(interpretAnswer('10.0.0.1', 404, '404 page not found')).toEqual({ kind: 'absent' });
    expect(interpretAnswer('10.0.0.1', 404, JSON.stringify({ reason: 'NotFound', details: {} }))).toEqual({
      kind: 'absent',
    });
  });

  it('names the holder from parentRef, or the IPAddress itself when it has none', () => {
    const held = {
      metadata: { name: '10.0.0.1' },
      spec: { parentRef: { resource: 'services', namespace: 'a', name: 's' } },
    };
    expect(interpretAnswer('10.0.0.1', 200, JSON.stringify(held))).toEqual({ kind: 'held', holder: SERVICE });
    expect(interpretAnswer('10.0.0.1', 200, '{"metadata":{"name":"10.0.0.1"}}')).toEqual({
      kind: 'held',
      holder: { group: 'networking.k8s.io', resource: 'ipaddresses', namespace: '', name: '10.0.0.1' },
    });
  });

  it('anything else is an error with a short reason', () => {
    expect(interpretAnswer('x', 500, 'boom')).toMatchObject({
      kind: 'error',
      reason: 'HTTP 500 from the API server',
    });
    expect(interpretAnswer('x', 200, 'not json')).toMatchObject({ kind: 'error' });
  });
});
