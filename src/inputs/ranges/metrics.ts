/** The cluster watches' Prometheus metrics, registered once per registry. */
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

export interface ClusterMetrics {
  readonly serviceRanges: Gauge<'cidr' | 'terminating'>;
  readonly watchRestarts: Counter<'resource'>;
  readonly badAnswers: Counter<'resource' | 'reason'>;
  readonly lastSync: Gauge<'resource'>;
}

function reuse<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

export function clusterMetrics(registry: Registry): ClusterMetrics {
  return {
    serviceRanges: reuse(
      registry,
      'routability_webhook_service_ranges',
      () =>
        new Gauge({
          name: 'routability_webhook_service_ranges',
          help: 'Service CIDRs the rules use (1 per CIDR); terminating="true" takes no new Cluster requests.',
          labelNames: ['cidr', 'terminating'] as const,
          registers: [registry],
        }),
    ),
    watchRestarts: reuse(
      registry,
      'routability_webhook_watch_restarts_total',
      () =>
        new Counter({
          name: 'routability_webhook_watch_restarts_total',
          help: 'Times a cluster watch stopped on an error and was restarted.',
          labelNames: ['resource'] as const,
          registers: [registry],
        }),
    ),
    badAnswers: reuse(
      registry,
      'routability_webhook_kube_bad_answers_total',
      () =>
        new Counter({
          name: 'routability_webhook_kube_bad_answers_total',
          help: 'API server answers to a cluster watch (list bodies, watch lines) that came but could not be used; the last objects were kept.',
          labelNames: ['resource', 'reason'] as const,
          registers: [registry],
        }),
    ),
    lastSync: reuse(
      registry,
      'routability_webhook_watch_last_sync_timestamp_seconds',
      () =>
        new Gauge({
          name: 'routability_webhook_watch_last_sync_timestamp_seconds',
          help: 'Unix time of the last successful list or watch event, per watched resource.',
          labelNames: ['resource'] as const,
          registers: [registry],
        }),
    ),
  };
}
