/**
 * The review recorder (src/http/review-record.ts) on its own: the log line of
 * a review (its level: info for a denial, a limited warning when slow, debug
 * otherwise; its fields, the cut of long names, the over-timeout flag), the
 * request counter per webhook, operation, decision and code, the duration
 * histogram and the findings counter. review-log-level.test.ts sees
 * the levels through the app; these pin each field.
 */
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/admission/outcome.js';
import type { AdmissionRequest } from '../../src/admission/review.js';
import { MAX_LOGGED_CHARS } from '../../src/http/log-text.js';
import { createServerMetrics } from '../../src/http/metrics.js';
import { createReviewLog } from '../../src/http/review-log.js';
import { createReviewRecorders } from '../../src/http/review-record.js';

type Line = [level: string, fields: Record<string, unknown>, message: string];

function setup(level: 'info' | 'debug' = 'info') {
  const lines: Line[] = [];
  const at = (name: string) => (fields: Record<string, unknown>, message: string) =>
    void lines.push([name, fields, message]);
  const logger = {
    isLevelEnabled: (l: string) => l !== 'debug' || level === 'debug',
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  } as unknown as Logger;
  const registry = new Registry();
  const recorders = createReviewRecorders(logger, createServerMetrics(registry));
  const requests = async () =>
    (await registry.getSingleMetric('routability_webhook_requests_total')!.get()).values.map(
      (v) =>
        `${v.labels['webhook']} ${v.labels['operation']} ${v.labels['outcome']} ${v.labels['code']} ${v.value}`,
    );
  const durations = async () =>
    (await registry.getSingleMetric('routability_webhook_request_duration_seconds')!.get()).values
      .filter(
        (v) =>
          (v as { metricName?: string }).metricName === 'routability_webhook_request_duration_seconds_count',
      )
      .map((v) => `${v.labels['webhook']} ${v.value}`);
  const violations = async () =>
    (await registry.getSingleMetric('routability_webhook_violations_total')!.get()).values.map(
      (v) => `${v.labels['rule']} ${v.value}`,
    );
  return { lines, recorders, requests, durations, violations };
}

const review = (over: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  uid: 'u-1',
  kind: { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' },
  resource: { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways' },
  name: 'gw',
  namespace: 'ns',
  operation: 'CREATE',
  ...over,
});

const common = { warnings: [], auditAnnotations: {}, codes: [] };
const allowed: Outcome = { kind: 'allowed', ...common };
const denied: Outcome = { kind: 'denied', ...common, codes: ['A', 'B'], message: 'no', causes: [] };
const emptyPatch: Outcome = { kind: 'patched', ...common, patch: [] };
const patched: Outcome = { kind: 'patched', ...common, patch: [{ op: 'add' }] };
const warned: Outcome = { kind: 'allowed', ...common, warnings: ['w'] };
const noted: Outcome = { kind: 'allowed', ...common, codes: ['N'] };

const timing = (seconds: number, budgetMs?: number) => ({ seconds, budgetMs });

describe('the review line', () => {
  it('carries the review, the decision, the revision and the duration in ms (to the microsecond)', () => {
    const { lines, recorders } = setup();
    recorders('validate').answered(
      review({ subResource: 'status', dryRun: true }),
      denied,
      timing(0.0012345678),
      'experimental',
    );
    expect(lines).toEqual([
      [
        'info',
        {
          uid: 'u-1',
          webhook: 'validate',
          kind: 'Gateway',
          version: 'v1',
          namespace: 'ns',
          name: 'gw',
          operation: 'CREATE',
          subResource: 'status',
          dryRun: true,
          decision: 'denied',
          gepRevision: 'experimental',
          codes: ['A', 'B'],
          durationMs: 1.235,
        },
        'review',
      ],
    ]);
  });

  it('leaves out what is empty: no subresource, no dry run, no codes', () => {
    const { lines, recorders } = setup('debug');
    recorders('mutate').answered(review({ subResource: '', dryRun: false }), patched, timing(0.001));
    const fields = lines[0]![1];
    expect([fields['subResource'], fields['dryRun'], fields['codes'], fields['overTimeout']]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(Object.keys(fields)).not.toContain('overTimeout');
    expect([lines[0]![0], fields['decision'], fields['webhook']]).toEqual(['debug', 'patched', 'mutate']);
  });

  it('cuts long kind, version, namespace, name and subresource to the logged length', () => {
    const { lines, recorders } = setup();
    const long = 'x'.repeat(MAX_LOGGED_CHARS + 5);
    const cut = `${'x'.repeat(MAX_LOGGED_CHARS)}...(5 more characters)`;
    recorders('validate').answered(
      review({
        kind: { group: 'g', version: long, kind: long },
        namespace: long,
        name: long,
        subResource: long,
      }),
      denied,
      timing(0),
    );
    const f = lines[0]![1];
    expect([f['kind'], f['version'], f['namespace'], f['name'], f['subResource']]).toEqual([
      cut,
      cut,
      cut,
      cut,
      cut,
    ]);
  });

  it('an allowed review with nothing to report is not logged at info; at debug it is, as debug', () => {
    const quiet = setup('info');
    quiet.recorders('validate').answered(review(), allowed, timing(0.001));
    quiet.recorders('mutate').answered(review(), emptyPatch, timing(0.001));
    expect(quiet.lines).toEqual([]);
    const loud = setup('debug');
    loud.recorders('mutate').answered(review(), emptyPatch, timing(0.001));
    expect(loud.lines.map(([level, f, m]) => [level, f['decision'], m])).toEqual([
      ['debug', 'allowed', 'review'],
    ]);
  });

  it('warnings, codes and a patch keep a review routine: no line at info, a debug line at debug', () => {
    const quiet = setup('info');
    for (const outcome of [warned, noted, patched])
      quiet.recorders('validate').answered(review(), outcome, timing(0));
    expect(quiet.lines).toEqual([]);
    const loud = setup('debug');
    for (const outcome of [warned, noted, patched])
      loud.recorders('validate').answered(review(), outcome, timing(0));
    expect(loud.lines.map(([level, f]) => [level, f['decision'], f['uid']])).toEqual([
      ['debug', 'allowed', 'u-1'],
      ['debug', 'allowed', 'u-1'],
      ['debug', 'patched', 'u-1'],
    ]);
  });

  it("an answer slower than the apiserver's ?timeout= is a warning, even if routine; a slow denial stays info", () => {
    const { lines, recorders } = setup('info');
    const r = recorders('validate');
    r.answered(review(), allowed, timing(2, 2_000)); // exactly the budget: not over
    r.answered(review(), allowed, timing(3, undefined)); // no budget sent
    expect(lines).toEqual([]);
    r.answered(review(), allowed, timing(2.001, 2_000));
    r.answered(review(), denied, timing(2.001, 2_000));
    expect(lines.map(([level, f]) => [level, f['overTimeout'], f['durationMs'], f['decision']])).toEqual([
      ['warn', true, 2001, 'allowed'],
      ['info', true, 2001, 'denied'],
    ]);
  });

  it('slow answers in a flood: ten warnings, then one each 5 s, with the count held back', () => {
    const lines: Line[] = [];
    const at = (name: string) => (fields: Record<string, unknown>, message: string) =>
      void lines.push([name, fields, message]);
    const logger = { isLevelEnabled: () => false, info: at('info'), warn: at('warn') } as unknown as Logger;
    let t = 0;
    const log = createReviewLog(logger, { now: () => t, summaryEveryMs: 0 });
    const r = createReviewRecorders(logger, createServerMetrics(new Registry()), log)('mutate');
    for (let i = 0; i < 1_000; i++) r.answered(review({ uid: `u-${i}` }), patched, timing(1, 0));
    expect(lines.map(([level, f]) => `${level} ${String(f['uid'])}`)).toEqual(
      [...Array(10).keys()].map((i) => `warn u-${i}`),
    );
    t = 5_000;
    r.answered(review({ uid: 'late' }), patched, timing(1, 0));
    expect(lines.slice(10)).toEqual([
      ['warn', { kind: 'slow review', suppressed: 990 }, '990 lines suppressed'],
      ['warn', expect.objectContaining({ uid: 'late', overTimeout: true }), 'review'],
    ]);
  });
});

describe('what is counted', () => {
  it('answered reviews by webhook, operation and decision with code 200; an empty patch counts as allowed', async () => {
    const { recorders, requests, durations } = setup();
    recorders('validate').answered(review(), allowed, timing(0));
    recorders('validate').answered(review(), allowed, timing(0));
    recorders('validate').answered(review({ operation: 'UPDATE' }), denied, timing(0));
    recorders('mutate').answered(review(), emptyPatch, timing(0));
    recorders('mutate').answered(review(), patched, timing(0));
    expect((await requests()).sort()).toEqual([
      'mutate CREATE allowed 200 1',
      'mutate CREATE patched 200 1',
      'validate CREATE allowed 200 2',
      'validate UPDATE denied 200 1',
    ]);
    expect((await durations()).sort()).toEqual(['mutate 2', 'validate 3']);
  });

  it('each finding by its rule code', async () => {
    const { recorders, violations } = setup();
    recorders('validate').answered(review(), denied, timing(0));
    recorders('validate').answered(review(), noted, timing(0));
    recorders('mutate').answered(review(), denied, timing(0));
    expect((await violations()).sort()).toEqual(['A 2', 'B 2', 'N 1']);
  });

  it('an undecodable body: a warning with the uid and the cut reason, counted unknown error 400', async () => {
    const { lines, recorders, requests } = setup();
    const reason = 'r'.repeat(MAX_LOGGED_CHARS + 1);
    recorders('mutate').undecodable('u-9', reason);
    recorders('mutate').undecodable(undefined, 'bad');
    expect(lines).toEqual([
      [
        'warn',
        { uid: 'u-9', webhook: 'mutate', reason: `${'r'.repeat(MAX_LOGGED_CHARS)}...(1 more characters)` },
        'undecodable review',
      ],
      ['warn', { uid: undefined, webhook: 'mutate', reason: 'bad' }, 'undecodable review'],
    ]);
    expect(await requests()).toEqual(['mutate unknown error 400 2']);
  });

  it('a failed request by its HTTP status, per webhook; one recorder per webhook, reused', async () => {
    const { recorders, requests, lines } = setup();
    expect(recorders('validate')).toBe(recorders('validate'));
    expect(recorders('validate')).not.toBe(recorders('mutate'));
    recorders('validate').failed(503);
    recorders('validate').failed(503);
    recorders('validate').failed(429);
    recorders('mutate').failed(503);
    expect((await requests()).sort()).toEqual([
      'mutate unknown error 503 1',
      'validate unknown error 429 1',
      'validate unknown error 503 2',
    ]);
    expect(lines).toEqual([]);
  });

  it('binds the counter cell of a label set once and reuses it', () => {
    const metrics = createServerMetrics(new Registry());
    const bound: string[] = [];
    const recorders = createReviewRecorders({ warn: () => {} } as unknown as Logger, {
      ...metrics,
      requests: (labels) => {
        bound.push(Object.values(labels).join(' '));
        return metrics.requests(labels);
      },
    });
    for (let i = 0; i < 3; i++) {
      recorders('validate').failed(503);
      recorders('validate').undecodable('u', 'bad');
    }
    expect(bound).toEqual(['validate unknown error 503', 'validate unknown error 400']);
  });
});
