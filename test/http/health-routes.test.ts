/**
 * The plain-HTTP health app in-process (fastify inject): what a kubelet probe
 * and a Prometheus scrape see for ready, not ready and verbose readiness. The
 * same endpoints are checked end to end against the built server elsewhere;
 * these run inside the mutation subset (vitest.mutation.config.ts).
 */
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { buildHealthApp } from '../../src/http/health.js';
import type { HealthComponent } from '../../src/readiness.js';

const apps: ReturnType<typeof buildHealthApp>[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

function healthApp(components: HealthComponent[], registry = new Registry()) {
  const app = buildHealthApp({ components, registry });
  apps.push(app);
  return app;
}

const ready = (name: string): HealthComponent => ({ name, check: () => ({ ok: true }) });
const failing = (name: string, reason?: string): HealthComponent => ({
  name,
  check: () => ({ ok: false, reason }),
});

describe('health app /healthz', () => {
  it('answers 200 "ok" in plain text even when a component is not ready', async () => {
    const res = await healthApp([failing('serviceRanges', 'not synced')]).inject({ url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toBe('ok\n');
  });
});

describe('health app /readyz', () => {
  it('answers 200 "ok" when every component is ready (and one without a check never holds it back)', async () => {
    const reportOnly: HealthComponent = {
      name: 'revision',
      detail: { key: 'revision', describe: () => 'x' },
    };
    const res = await healthApp([ready('certificate'), reportOnly]).inject({ url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toBe('ok\n');
  });

  it('answers 503 and lists each failing component with its reason, one per line', async () => {
    const res = await healthApp([
      ready('certificate'),
      failing('serviceRanges', 'no ServiceCIDR seen yet'),
      failing('shutdown'),
    ]).inject({ url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toBe('not ready:\n- serviceRanges: no ServiceCIDR seen yet\n- shutdown: not ready\n');
  });

  it('asks the components again on every probe', async () => {
    let ok = false;
    const app = healthApp([{ name: 'certificate', check: () => ({ ok, reason: 'none loaded' }) }]);
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(503);
    ok = true;
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
  });

  it('with ?verbose answers JSON: ready, the failing list and every component detail, same status code', async () => {
    const components: HealthComponent[] = [
      {
        ...ready('certificate'),
        detail: { key: 'certificate', describe: () => ({ notAfter: '2030-01-01' }) },
      },
      {
        ...failing('serviceRanges', 'stale'),
        detail: { key: 'serviceRanges', describe: () => ['10.96.0.0/12'] },
      },
    ];
    const notReady = await healthApp(components).inject({ url: '/readyz?verbose' });
    expect(notReady.statusCode).toBe(503);
    expect(notReady.headers['content-type']).toMatch(/^application\/json/);
    expect(notReady.json()).toEqual({
      ready: false,
      failing: ['serviceRanges: stale'],
      detail: { certificate: { notAfter: '2030-01-01' }, serviceRanges: ['10.96.0.0/12'] },
    });

    const allReady = await healthApp([components[0]!]).inject({ url: '/readyz?verbose=1' });
    expect(allReady.statusCode).toBe(200);
    expect(allReady.json()).toEqual({
      ready: true,
      failing: [],
      detail: { certificate: { notAfter: '2030-01-01' } },
    });
  });

  it('without ?verbose (another query parameter) stays plain text', async () => {
    const res = await healthApp([ready('certificate')]).inject({ url: '/readyz?other=1' });
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toBe('ok\n');
  });
});

describe('health app /metrics', () => {
  it("serves the registry passed in, in the registry's own content type", async () => {
    const registry = new Registry();
    new Counter({
      name: 'health_routes_probe_total',
      help: 'A counter only this test registers.',
      registers: [registry],
    }).inc(3);
    const res = await healthApp([ready('certificate')], registry).inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(registry.contentType);
    expect(res.body).toContain('health_routes_probe_total 3');
  });
});
