/**
 * The log does not grow with routine traffic (src/http/review-log.ts through
 * the app): allowed and patched reviews write no line each at the default
 * level, only a summary with their counts; denials keep their line with the
 * uid; a flood of per-request warnings is capped by its bucket.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { staticSources } from '../../src/inputs/ranges/static-source.js';
import { buildApp } from '../../src/http/app.js';
import { createServerMetrics } from '../../src/http/metrics.js';
import type { ReviewLogOptions } from '../../src/http/review-log.js';
import { ruleInputs } from '../../src/inputs/rule-inputs.js';
import { FIXTURE_SETTINGS } from '../kit/app.js';
import { DUAL_STACK } from '../kit/gateways.js';

type Review = { request: { uid: string } };
const fixture = (name: string) =>
  JSON.parse(
    readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reviews', `${name}.json`), 'utf8'),
  ) as Review;
const withUid = (review: Review, uid: string): Review => ({ ...review, request: { ...review.request, uid } });

function app(reviewLog?: ReviewLogOptions, maxBodyBytes = FIXTURE_SETTINGS.maxBodyBytes) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const webhook = buildApp({
    config: { ...FIXTURE_SETTINGS, maxBodyBytes },
    // The server's default level.
    logger: pino({ level: 'info' }, sink),
    inputs: ruleInputs({ settings: FIXTURE_SETTINGS, sources: staticSources(DUAL_STACK, 'test') }),
    metrics: createServerMetrics(new Registry()),
    ...(reviewLog ? { reviewLog } : {}),
  });
  const post = (url: string, payload: object | string) =>
    webhook.inject({
      method: 'POST',
      url,
      payload,
      headers: { 'content-type': 'application/json' },
    });
  return { webhook, lines, post };
}

describe('the review log at the default level', () => {
  it('2,000 routine reviews (allowed and patched, warned about or not) write one summary line', async () => {
    const a = app();
    const routine = [
      ['/validate', fixture('create-allowed')],
      ['/validate', fixture('update-ratcheted')],
      ['/mutate', fixture('status-defaulting')],
      ['/mutate', fixture('create-allowed')],
    ] as const;
    for (let i = 0; i < 2_000; i++) {
      const [url, review] = routine[i % routine.length]!;
      const res = await a.post(url, withUid(review, `r-${i}`));
      expect(res.statusCode).toBe(200);
    }
    expect(a.lines).toEqual([]);
    await a.webhook.close();
    // Closing writes the last summary: the counts since the last one.
    expect(a.lines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'reviews since the last summary',
        reviews: { validate: { allowed: 1_000 }, mutate: { allowed: 500, patched: 500 } },
      }),
    ]);
  }, 60_000);

  it('a denial keeps its line at info with its uid, and is counted in the summary too', async () => {
    const a = app();
    await a.post('/validate', withUid(fixture('create-allowed'), 'fine'));
    const res = await a.post('/validate', withUid(fixture('create-case-slip'), 'refused-1'));
    expect(res.json()).toMatchObject({ response: { uid: 'refused-1', allowed: false } });
    expect(a.lines).toEqual([
      expect.objectContaining({ level: 30, msg: 'review', uid: 'refused-1', decision: 'denied' }),
    ]);
    await a.webhook.close();
    expect(a.lines[1]).toMatchObject({ reviews: { validate: { allowed: 1, denied: 1 } } });
  });

  it('writes a summary each interval when reviews were answered, and none when none were', async () => {
    const a = app({ summaryEveryMs: 40 });
    await a.post('/mutate', fixture('status-defaulting'));
    await new Promise((r) => setTimeout(r, 150));
    const summaries = () => a.lines.filter((l) => l['msg'] === 'reviews since the last summary');
    // One line for the one review; the quiet intervals after it wrote nothing.
    expect(summaries()).toEqual([expect.objectContaining({ reviews: { mutate: { patched: 1 } } })]);
    await a.webhook.close();
    expect(summaries()).toHaveLength(1);
  });

  it('a flood of undecodable bodies writes ten warnings, then the count of those held back', async () => {
    let t = 0;
    const a = app({ now: () => t });
    for (let i = 0; i < 500; i++) {
      const res = await a.post('/validate', { request: { uid: `bad-${i}` } });
      expect(res.statusCode).toBe(400);
    }
    const warned = a.lines.filter((l) => l['msg'] === 'undecodable review');
    expect(warned.map((l) => l['uid'])).toEqual([...Array(10).keys()].map((i) => `bad-${i}`));
    expect(a.lines).toHaveLength(10);
    // The flood goes on after 5 s: one more line, preceded by the count.
    t = 5_000;
    await a.post('/validate', { request: { uid: 'bad-late' } });
    expect(a.lines.slice(10)).toEqual([
      expect.objectContaining({
        level: 40,
        kind: 'undecodable review',
        suppressed: 490,
        msg: '490 lines suppressed',
      }),
      expect.objectContaining({ level: 40, uid: 'bad-late', msg: 'undecodable review' }),
    ]);
    await a.webhook.close();
  });

  it('a flood of answers past their timeout, and of refused requests, is capped per kind', async () => {
    const a = app({ now: () => 0 }, 64 * 1024);
    for (let i = 0; i < 100; i++) {
      // ?timeout=0s: every answer is past it.
      await a.post('/mutate?timeout=0s', withUid(fixture('status-defaulting'), `slow-${i}`));
      await a.post('/validate', 'x'.repeat(64 * 1024 + 1));
      await a.post('/validate', '{"not json');
    }
    const count = (msg: string, status?: number) =>
      a.lines.filter((l) => l['msg'] === msg && (status === undefined || l['status'] === status)).length;
    expect([count('review'), count('rejected request', 413), count('rejected request', 400)]).toEqual([
      10, 10, 10,
    ]);
    expect(a.lines).toHaveLength(30);
    await a.webhook.close();
    // Closing says how many of each were held back, and sums up the reviews.
    const suppressed = a.lines.filter((l) => l['suppressed']).map((l) => [l['kind'], l['suppressed']]);
    expect(suppressed.sort()).toEqual([
      ['rejected 400', 90],
      ['rejected 413', 90],
      ['slow review', 90],
    ]);
  }, 30_000);
});
