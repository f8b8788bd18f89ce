/**
 * The server's metrics (src/http/metrics.ts) as a scrape sees them: each
 * metric's name, type, help and labels, the duration histogram's buckets, and
 * the two counted on the hot path (the request counter's cells and the
 * in-flight gauge), which reach prom-client only when scraped.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createServerMetrics } from '../../src/http/metrics.js';

function setup() {
  const registry = new Registry();
  const metrics = createServerMetrics(registry);
  const values = async (name: string) =>
    (await registry.getSingleMetric(name)!.get()).values.map((v) => [v.labels, v.value]);
  return { registry, metrics, values };
}

const labels = (webhook: string, code: string) => ({
  webhook,
  operation: 'CREATE',
  outcome: 'allowed',
  code,
});

describe('the server metrics', () => {
  it('are registered by name, type and help', async () => {
    const { registry } = setup();
    const json = await registry.getMetricsAsJSON();
    expect(json.map((m) => [m.name, m.type, m.help])).toEqual([
      [
        'routability_webhook_requests_total',
        'counter',
        'Admission requests by webhook, operation, outcome (allowed, denied, patched, error) and HTTP code.',
      ],
      [
        'routability_webhook_request_duration_seconds',
        'histogram',
        'Time from request received to answer sent.',
      ],
      ['routability_webhook_inflight_requests', 'gauge', 'Admission requests being handled now.'],
      [
        'routability_webhook_violations_total',
        'counter',
        'Findings by rule code (denied, warned, ratcheted or notices).',
      ],
      [
        'routability_webhook_certificate_expiry_timestamp_seconds',
        'gauge',
        'notAfter of the serving certificate in use, as a Unix time.',
      ],
    ]);
  });

  it('label the duration by webhook and the findings by rule; the duration has buckets from 0.5 ms to 2.5 s', async () => {
    const { registry, metrics } = setup();
    metrics.duration.observe({ webhook: 'validate' }, 0.0003);
    metrics.violations.inc({ rule: 'R1' });
    const text = await registry.metrics();
    const buckets = [...text.matchAll(/_bucket\{le="([^"]+)",webhook="validate"\} (\d+)/g)].map((m) => [
      m[1],
      Number(m[2]),
    ]);
    expect(buckets).toEqual(
      ['0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '1', '2.5', '+Inf'].map(
        (le) => [le, 1],
      ),
    );
    expect(text).toContain('routability_webhook_violations_total{rule="R1"} 1');
  });

  it('count requests per bound label set and hand them over once, when scraped', async () => {
    const { metrics, values } = setup();
    const ok = metrics.requests(labels('validate', '200'));
    const failed = metrics.requests(labels('mutate', '400'));
    metrics.requests(labels('validate', '500'));
    ok.inc();
    ok.inc();
    failed.inc();
    // A bound cell that never counted adds no series.
    expect(await values('routability_webhook_requests_total')).toEqual([
      [labels('validate', '200'), 2],
      [labels('mutate', '400'), 1],
    ]);
    // A second scrape does not add the same requests again; new ones are added.
    expect(await values('routability_webhook_requests_total')).toEqual([
      [labels('validate', '200'), 2],
      [labels('mutate', '400'), 1],
    ]);
    failed.inc();
    expect(await values('routability_webhook_requests_total')).toEqual([
      [labels('validate', '200'), 2],
      [labels('mutate', '400'), 2],
    ]);
  });

  it('show the requests in flight at the moment of the scrape', async () => {
    const { metrics, values } = setup();
    expect(await values('routability_webhook_inflight_requests')).toEqual([[{}, 0]]);
    metrics.inflight.inc();
    metrics.inflight.inc();
    metrics.inflight.dec();
    expect(await values('routability_webhook_inflight_requests')).toEqual([[{}, 1]]);
    metrics.inflight.dec();
    expect(await values('routability_webhook_inflight_requests')).toEqual([[{}, 0]]);
  });
});
