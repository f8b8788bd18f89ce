/**
 * A request that fails without a review answer is counted for the webhook
 * whose route it reached (each route's own error handler), and for none when
 * it reached no webhook route, however its URL is spelt.
 */
import { describe, expect, it } from 'vitest';
import { testApp } from '../kit/app.js';

const failures = async (registry: ReturnType<typeof testApp>['registry']) =>
  (await registry.metrics())
    .split('\n')
    .filter((line) => line.startsWith('routability_webhook_requests_total{') && !line.includes('code="200"'));

describe('error answers by route', () => {
  it('counts a refused body for the webhook of the route, mutate and validate alike', async () => {
    const { app, registry } = testApp();
    const bad = { method: 'POST' as const, headers: { 'content-type': 'text/plain' }, payload: 'x' };
    expect((await app.inject({ ...bad, url: '/mutate?timeout=10s' })).statusCode).toBe(400);
    expect((await app.inject({ ...bad, url: '/validate' })).statusCode).toBe(400);
    const counted = await failures(registry);
    expect(counted.filter((l) => l.includes('webhook="mutate"') && l.includes('code="400"'))).toHaveLength(1);
    expect(counted.filter((l) => l.includes('webhook="validate"') && l.includes('code="400"'))).toHaveLength(
      1,
    );
  });

  it('answers a failure outside the webhook routes without counting it for a webhook', async () => {
    const { app, registry } = testApp();
    const res = await app.inject({
      method: 'POST',
      url: '/validate/../nowhere?x=/validate',
      headers: { 'content-type': 'application/json' },
      payload: '{',
    });
    expect([400, 404]).toContain(res.statusCode);
    expect(await failures(registry)).toEqual([]);
  });
});
