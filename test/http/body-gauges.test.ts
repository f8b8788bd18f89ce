/**
 * The body-budget gauges are read from the budget when scraped (no gauge is set
 * per review): what a scrape shows while bodies are in flight and waiting, and
 * after they are released.
 */
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createCaps } from '../../src/http/caps.js';

async function gauge(registry: Registry, name: string): Promise<number> {
  const metric = registry.getSingleMetric(name);
  const value = (await metric!.get()).values[0]?.value;
  return value ?? NaN;
}

describe('body-budget gauges', () => {
  it('show the bytes in flight and the bodies waiting at the moment of the scrape', async () => {
    const registry = new Registry();
    const caps = createCaps(
      { maxConnections: 10, maxInflightBodyBytes: 1_000_000 },
      registry,
      pino({ level: 'silent' }),
    );
    const inFlight = () => gauge(registry, 'routability_webhook_request_body_bytes_in_flight');
    const waiting = () => gauge(registry, 'routability_webhook_request_bodies_waiting');
    expect([await inFlight(), await waiting()]).toEqual([0, 0]);

    const first = caps.bodyBudget.tryAcquire(700_000)!;
    expect(await inFlight()).toBe(700_000);
    // 400 KB more does not fit the 1 MB budget (and is over the small lane's bodies): it waits.
    let granted: (() => void) | undefined;
    caps.bodyBudget.acquire(400_000, 60_000, (release) => (granted = release));
    expect([await inFlight(), await waiting()]).toEqual([700_000, 1]);

    first();
    expect(granted).toBeDefined();
    expect([await inFlight(), await waiting()]).toEqual([400_000, 0]);
    granted!();
    expect([await inFlight(), await waiting()]).toEqual([0, 0]);
  });
});
