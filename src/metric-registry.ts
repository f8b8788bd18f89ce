/**
 * The one way a metric is registered: `counter`, `gauge` or `histogram` with the registry it goes
 * on (never prom-client's global one). A factory that several parts call with one registry gets the
 * metric the first call registered, so each name is registered once per registry. A metric read
 * through `collect` closes over its maker's state, so registering its name twice is refused as
 * prom-client refuses it, rather than handing back the first maker's metric.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CounterConfiguration, GaugeConfiguration, HistogramConfiguration } from 'prom-client';

type Made<C> = Omit<C, 'registers'>;

function registered<M>(
  registry: Registry,
  config: { readonly name: string; readonly collect?: unknown },
  kind: abstract new (...args: never[]) => M,
  make: () => M,
): M {
  const existing = registry.getSingleMetric(config.name);
  if (existing === undefined) return make();
  if (!(existing instanceof kind) || config.collect !== undefined)
    throw new Error(`metric ${config.name} is already registered on this registry`);
  return existing;
}

export function counter<T extends string = string>(
  registry: Registry,
  config: Made<CounterConfiguration<T>>,
): Counter<T> {
  return registered(registry, config, Counter<T>, () => new Counter<T>({ ...config, registers: [registry] }));
}

export function gauge<T extends string = string>(
  registry: Registry,
  config: Made<GaugeConfiguration<T>>,
): Gauge<T> {
  return registered(registry, config, Gauge<T>, () => new Gauge<T>({ ...config, registers: [registry] }));
}

export function histogram<T extends string = string>(
  registry: Registry,
  config: Made<HistogramConfiguration<T>>,
): Histogram<T> {
  return registered(
    registry,
    config,
    Histogram<T>,
    () => new Histogram<T>({ ...config, registers: [registry] }),
  );
}
