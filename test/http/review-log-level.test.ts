/**
 * What is logged at which level: allowed and patched reviews are routine
 * (debug), findings and warnings included; denials stay at info, and every
 * review line carries the uid.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { staticSources } from '../../src/inputs/ranges/static-source.js';
import { buildApp } from '../../src/http/app.js';
import { ruleInputs } from '../../src/inputs/rule-inputs.js';
import { createServerMetrics } from '../../src/http/metrics.js';
import { FIXTURE_SETTINGS } from '../kit/app.js';
import { DUAL_STACK } from '../kit/gateways.js';

const fixture = (name: string) =>
  JSON.parse(
    readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reviews', `${name}.json`), 'utf8'),
  ) as {
    request: { uid: string };
  };

async function reviewLines(level: string, route: string, name: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const app = buildApp({
    config: FIXTURE_SETTINGS,
    logger: pino({ level }, sink),
    inputs: ruleInputs({ settings: FIXTURE_SETTINGS, sources: staticSources(DUAL_STACK, 'test') }),
    metrics: createServerMetrics(new Registry()),
  });
  const review = fixture(name);
  const res = await app.inject({ method: 'POST', url: route, payload: review });
  await app.close();
  expect(res.statusCode).toBe(200);
  const answer = (
    JSON.parse(res.body) as { response: { allowed: boolean; warnings?: string[]; patch?: string } }
  ).response;
  return { answer, uid: review.request.uid, lines: lines.filter((l) => l['msg'] === 'review') };
}

describe('review log levels', () => {
  it('an allowed review without findings is logged at debug, and not at info', async () => {
    const atInfo = await reviewLines('info', '/validate', 'create-allowed');
    expect(atInfo.answer).toMatchObject({ allowed: true });
    expect(atInfo.answer.warnings).toBeUndefined();
    expect(atInfo.lines).toEqual([]);

    const atDebug = await reviewLines('debug', '/validate', 'create-allowed');
    expect(atDebug.lines).toHaveLength(1);
    expect(atDebug.lines[0]).toMatchObject({ level: 20, uid: atDebug.uid, decision: 'allowed' });
  });

  it('a denial is logged at info with its uid and codes', async () => {
    const { answer, uid, lines } = await reviewLines('info', '/validate', 'create-case-slip');
    expect(answer.allowed).toBe(false);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, uid, decision: 'denied', codes: ['RoutabilityUnsupported'] });
  });

  it('an allowed review with warnings is routine: logged at debug only', async () => {
    const { answer, lines } = await reviewLines('info', '/validate', 'update-ratcheted');
    expect(answer.allowed).toBe(true);
    expect(answer.warnings?.length).toBeGreaterThan(0);
    expect(lines).toEqual([]);
    const atDebug = await reviewLines('debug', '/validate', 'update-ratcheted');
    expect(atDebug.lines).toHaveLength(1);
    expect(atDebug.lines[0]).toMatchObject({ level: 20, uid: atDebug.uid, decision: 'allowed' });
  });

  it('a patched review is routine: logged at debug only', async () => {
    const { answer, lines } = await reviewLines('info', '/mutate', 'status-defaulting');
    expect(answer.patch).toBeDefined();
    expect(lines).toEqual([]);
    const atDebug = await reviewLines('debug', '/mutate', 'status-defaulting');
    expect(atDebug.lines).toHaveLength(1);
    expect(atDebug.lines[0]).toMatchObject({ level: 20, uid: atDebug.uid, decision: 'patched' });
  });
});
