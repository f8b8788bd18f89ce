/**
 * The one registration idiom: a metric goes on the registry passed in, once per name; a second
 * maker gets the first one's metric, unless the kinds differ or the metric is read through collect.
 */
import { Counter, Gauge, Histogram, Registry, register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { counter, gauge, histogram } from '../src/metric-registry.js';

const config = {
  name: 'test_metric_total',
  help: 'A metric for this test.',
  labelNames: ['reason'] as const,
};

describe('metric-registry', () => {
  it.each([
    { kind: 'counter', make: (r: Registry) => counter(r, config), type: Counter },
    { kind: 'gauge', make: (r: Registry) => gauge(r, config), type: Gauge },
    { kind: 'histogram', make: (r: Registry) => histogram(r, config), type: Histogram },
  ])('$kind: registers on the registry given, once per name', async ({ make, type }) => {
    const registry = new Registry();
    const first = make(registry);
    expect(first).toBeInstanceOf(type);
    expect(registry.getSingleMetric(config.name)).toBe(first);
    expect(globalRegistry.getSingleMetric(config.name)).toBeUndefined();
    expect(make(registry)).toBe(first);
    expect(make(new Registry())).not.toBe(first);
    expect((await registry.getMetricsAsJSON()).filter((m) => m.name === config.name)).toHaveLength(1);
  });

  it('refuses a name taken by another kind', () => {
    const registry = new Registry();
    counter(registry, config);
    expect(() => gauge(registry, config)).toThrow(/test_metric_total is already registered/);
  });

  it('refuses a second metric read through collect: its state would be the first maker’s', () => {
    const registry = new Registry();
    const collect = () => {};
    gauge(registry, { ...config, collect });
    expect(() => gauge(registry, { ...config, collect })).toThrow(/already registered/);
  });

  it('passes collect on: the value is read when scraped', async () => {
    const registry = new Registry();
    let value = 3;
    gauge(registry, {
      name: 'test_collected',
      help: 'Read when scraped.',
      collect() {
        this.set(value);
      },
    });
    value = 7;
    expect(await registry.metrics()).toContain('test_collected 7');
  });
});
