/** Request fields in log lines are capped: a 1 MiB namespace does not make a 1 MiB line. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { staticSources } from '../../src/inputs/ranges/static-source.js';
import { buildApp } from '../../src/http/app.js';
import { ruleInputs } from '../../src/inputs/rule-inputs.js';
import { clip, MAX_LOGGED_CHARS } from '../../src/http/log-text.js';
import { createServerMetrics } from '../../src/http/metrics.js';
import { FIXTURE_SETTINGS } from '../kit/app.js';
import { DUAL_STACK } from '../kit/gateways.js';

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reviews', `${name}.json`), 'utf8'));

function loggingApp(level = 'info') {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const app = buildApp({
    config: FIXTURE_SETTINGS,
    logger: pino({ level }, sink),
    inputs: ruleInputs({ settings: FIXTURE_SETTINGS, sources: staticSources(DUAL_STACK, 'test') }),
    metrics: createServerMetrics(new Registry()),
  });
  return { app, lines };
}

describe('logged request fields', () => {
  it('clip() keeps short strings and marks what it cut', () => {
    expect(clip('gateway')).toBe('gateway');
    expect(clip(undefined)).toBeUndefined();
    expect(clip('x'.repeat(MAX_LOGGED_CHARS + 10))).toBe(
      `${'x'.repeat(MAX_LOGGED_CHARS)}...(10 more characters)`,
    );
  });

  it.each([
    ['exactly the cap', 'x'.repeat(MAX_LOGGED_CHARS), undefined, 'x'.repeat(MAX_LOGGED_CHARS)],
    [
      'one over the cap',
      'x'.repeat(MAX_LOGGED_CHARS + 1),
      undefined,
      `${'x'.repeat(MAX_LOGGED_CHARS)}...(1 more characters)`,
    ],
    ['empty', '', undefined, ''],
    ['exactly a cap of 3', 'abc', 3, 'abc'],
    ['one over a cap of 3', 'abcd', 3, 'abc...(1 more characters)'],
    ['any, at a cap of 0', 'abcdef', 0, '...(6 more characters)'],
  ])('clip() of a string %s', (_, value, max, clipped) => {
    expect(clip(value, max)).toBe(clipped);
  });

  it('a review with a 1 MiB namespace, name and kind logs a short line', async () => {
    // An allowed review without findings is logged at debug.
    const { app, lines } = loggingApp('debug');
    const review = fixture('create-allowed');
    const huge = 'n'.repeat(1 << 20);
    review.request.namespace = huge;
    review.request.name = huge;
    review.request.kind.version = huge;
    review.request.subResource = huge;
    const res = await app.inject({ method: 'POST', url: '/validate', payload: review });
    expect(res.statusCode).toBe(200);
    const reviewLine = lines.find((l) => l.includes('"msg":"review"'));
    expect(reviewLine).toBeDefined();
    expect(reviewLine!.length).toBeLessThan(4 * 1024);
    expect(JSON.parse(reviewLine!).namespace).toMatch(/^n{256}\.\.\.\(1048320 more characters\)$/);
    await app.close();
  });

  it('a 10 KiB unknown path logs and answers a short line', async () => {
    const { app, lines } = loggingApp();
    const res = await app.inject({ method: 'GET', url: `/${'p'.repeat(10_000)}` });
    expect(res.statusCode).toBe(404);
    expect(res.body.length).toBeLessThan(400);
    expect(lines.every((l) => l.length < 2048)).toBe(true);
    await app.close();
  });
});
