/**
 * The admission routes (src/http/admission-routes.ts) through inject(): the
 * apiserver's `?timeout=` as the routes read it, the in-flight gauge from a
 * request's arrival to its answer, a review answered after allocated-IP
 * lookups (and one whose lookups failed), and the duration and revision the
 * review line gets.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { staticSources } from '../../src/inputs/ranges/static-source.js';
import { parseTimeoutParam } from '../../src/http/admission-routes.js';
import { buildApp } from '../../src/http/app.js';
import { createServerMetrics } from '../../src/http/metrics.js';
import { ruleInputs, type RuleInputs } from '../../src/inputs/rule-inputs.js';
import { FIXTURE_SETTINGS } from '../kit/app.js';
import { DUAL_STACK } from '../kit/gateways.js';
import { sleep } from '../kit/eventually.js';

const allowedReview = readFileSync(
  join(import.meta.dirname, '..', 'fixtures', 'reviews', 'create-allowed.json'),
  'utf8',
);

describe('parseTimeoutParam', () => {
  it.each([
    ['10s', 10_000],
    ['1s', 1_000],
    ['0s', 0],
    ['30s', 30_000],
    ['9999s', 9_999_000],
    ['0010s', 10_000],
  ])('reads %j as %i ms', (text, ms) => {
    expect(parseTimeoutParam(text)).toBe(ms);
  });

  it.each([
    ['s', 'no digits'],
    ['', 'empty'],
    ['10000s', 'five digits'],
    ['10', 'no unit'],
    ['10m', 'another unit'],
    ['1.5s', 'a fraction'],
    ['-1s', 'a sign'],
    ['1/s', "the character before '0'"],
    ['1:s', "the character after '9'"],
    ['s1s', 'a letter'],
  ])('refuses %j (%s)', (text) => {
    expect(parseTimeoutParam(text)).toBeUndefined();
  });

  it('refuses what is not a string: a number, a repeated parameter, nothing', () => {
    expect([parseTimeoutParam(10), parseTimeoutParam(['10s', '10s']), parseTimeoutParam(undefined)]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});

/** The app with real rules and static ranges; `prefetch` stands in for the allocated-IP lookups. */
function app(prefetch?: RuleInputs['prefetch']) {
  const lines: [string, Record<string, unknown>, string][] = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) =>
    void lines.push([level, fields, message]);
  const logger = {
    isLevelEnabled: (l: string) => l !== 'debug',
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    trace: at('trace'),
    child: () => logger,
    level: 'info',
  } as unknown as Logger;
  const registry = new Registry();
  const real = ruleInputs({ settings: FIXTURE_SETTINGS, sources: staticSources(DUAL_STACK, 'test') });
  const inputs: RuleInputs = prefetch
    ? { ...real, current: () => real.current(), notReadyReason: () => real.notReadyReason(), prefetch }
    : real;
  const webhook = buildApp({
    config: FIXTURE_SETTINGS,
    logger,
    inputs,
    metrics: createServerMetrics(registry),
  });
  const metric = async (name: string) =>
    (await registry.getSingleMetric(name)!.get()).values.map((v) => ({
      name: (v as { metricName?: string }).metricName,
      labels: v.labels,
      value: v.value,
    }));
  const post = (url: string) =>
    webhook.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload: allowedReview,
    });
  return { webhook, lines, metric, post };
}

/** A prefetch whose lookups end when the test says so. */
function pendingPrefetch() {
  const ends: (() => void)[] = [];
  let fail = false;
  const prefetch = {
    decide: <T>(ctx: never, run: (c: never) => T) =>
      new Promise<T>((resolve, reject) =>
        ends.push(() => (fail ? reject(new Error('lookup failed')) : resolve(run(ctx)))),
      ),
  } as unknown as RuleInputs['prefetch'];
  return { prefetch, ends, failNext: () => (fail = true) };
}

describe('admission routes', () => {
  it('lets go of the parsed review once it is answered, before the answer is written', async () => {
    for (const p of [undefined, pendingPrefetch()]) {
      const a = app(p?.prefetch);
      const bodies: unknown[] = [];
      a.webhook.addHook('onSend', (request, _reply, payload, done) => {
        bodies.push(request.body);
        done(null, payload);
      });
      const answer = a.post('/validate');
      if (p) {
        while (p.ends.length === 0) await new Promise((r) => setImmediate(r));
        p.ends[0]!();
      }
      const res = await answer;
      expect(JSON.parse(res.body).response.allowed).toBe(true);
      expect(bodies).toEqual([undefined]);
      await a.webhook.close();
    }
  });

  it('counts a request in flight from its arrival to its answer', async () => {
    const p = pendingPrefetch();
    const a = app(p.prefetch);
    const inflight = async () => (await a.metric('routability_webhook_inflight_requests'))[0]?.value;
    expect(await inflight()).toBe(0);
    const answer = a.post('/validate');
    while (p.ends.length === 0) await new Promise((r) => setImmediate(r));
    expect(await inflight()).toBe(1);
    p.ends[0]!();
    const res = await answer;
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body).response.allowed).toBe(true);
    expect(await inflight()).toBe(0);
    await a.webhook.close();
  });

  it('answers at once when the rules need no lookups (the prefetch decides synchronously)', async () => {
    let decided = 0;
    const a = app({
      decide: <T>(ctx: never, run: (c: never) => T) => (decided++, run(ctx)),
    } as unknown as RuleInputs['prefetch']);
    const res = await a.post('/validate');
    expect([res.statusCode, JSON.parse(res.body).response.allowed, decided]).toEqual([200, true, 1]);
    await a.webhook.close();
  });

  it('answers 500 when the lookups of a review fail, counted for its webhook', async () => {
    const p = pendingPrefetch();
    const a = app(p.prefetch);
    const answer = a.post('/mutate');
    while (p.ends.length === 0) await new Promise((r) => setImmediate(r));
    p.failNext();
    p.ends[0]!();
    const res = await answer;
    expect([res.statusCode, res.json()]).toEqual([500, { error: 'internal error' }]);
    const counted = (await a.metric('routability_webhook_requests_total')).map((v) => [v.labels, v.value]);
    expect(counted).toEqual([
      [{ webhook: 'mutate', operation: 'unknown', outcome: 'error', code: '500' }, 1],
    ]);
    await a.webhook.close();
  });

  it('measures a review from its arrival: slower than ?timeout= is flagged, with the revision in force', async () => {
    const p = pendingPrefetch();
    const a = app(p.prefetch);
    // Answered at once, well within 10 s: routine, not logged at info.
    const quick = a.post('/validate?timeout=10s');
    while (p.ends.length === 0) await new Promise((r) => setImmediate(r));
    p.ends[0]!();
    expect((await quick).statusCode).toBe(200);
    expect(a.lines.filter((l) => l[2] === 'review')).toEqual([]);
    // Held 30 ms against a budget of 0 s.
    const slow = a.post('/validate?timeout=0s');
    while (p.ends.length === 1) await new Promise((r) => setImmediate(r));
    await sleep(30);
    p.ends[1]!();
    expect((await slow).statusCode).toBe(200);
    const logged = a.lines.filter((l) => l[2] === 'review').map((l) => l[1]);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ overTimeout: true, decision: 'allowed', gepRevision: 'provisional' });
    expect(logged[0]!['durationMs']).toBeGreaterThanOrEqual(25);
    expect(logged[0]!['durationMs']).toBeLessThan(60_000);
    await a.webhook.close();
  });

  it('a review without lookups is measured too: in ms from its arrival to its answer, and in s in the histogram', async () => {
    // The rules take 20 ms (a busy loop where the prefetch decides, synchronously: no lookup).
    const busy = (ms: number) => {
      for (const end = performance.now() + ms; performance.now() < end;);
    };
    const a = app({
      decide: <T>(ctx: never, run: (c: never) => T) => (busy(20), run(ctx)),
    } as unknown as RuleInputs['prefetch']);
    const before = performance.now();
    const res = await a.post('/validate?timeout=0s');
    const took = performance.now() - before;
    expect(res.statusCode).toBe(200);
    const logged = a.lines.filter((l) => l[2] === 'review').map((l) => l[1]);
    expect(logged).toHaveLength(1);
    const ms = logged[0]!['durationMs'] as number;
    // Milliseconds: at least the 20 ms of the rules, at most the whole request as the test saw it.
    expect(ms).toBeGreaterThanOrEqual(20);
    expect(ms).toBeLessThanOrEqual(took);
    // Rounded to the microsecond.
    expect(Math.round(ms * 1e3) / 1e3).toBe(ms);
    const series = await a.metric('routability_webhook_request_duration_seconds');
    const of = (name: string) =>
      series.find((v) => v.name === `routability_webhook_request_duration_seconds_${name}`)?.value;
    expect(of('count')).toBe(1);
    expect(Math.abs(of('sum')! - ms / 1000)).toBeLessThanOrEqual(1e-6);
    await a.webhook.close();
  });
});
