/** The cluster watches' Prometheus metrics, registered once per registry. */
import type { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { counter, gauge } from '../../metric-registry.js';

export interface ClusterMetrics {
  readonly serviceRanges: Gauge<'cidr' | 'terminating'>;
  readonly watchRestarts: Counter<'resource'>;
  readonly badAnswers: Counter<'resource' | 'reason'>;
  readonly lastSync: Gauge<'resource'>;
}

export function clusterMetrics(registry: Registry): ClusterMetrics {
  return {
    serviceRanges: gauge(registry, {
      name: 'routability_webhook_service_ranges',
      help: 'Service CIDRs the rules use (1 per CIDR); terminating="true" takes no new Cluster requests.',
      labelNames: ['cidr', 'terminating'] as const,
    }),
    watchRestarts: counter(registry, {
      name: 'routability_webhook_watch_restarts_total',
      help: 'Times a cluster watch stopped on an error and was restarted.',
      labelNames: ['resource'] as const,
    }),
    badAnswers: counter(registry, {
      name: 'routability_webhook_kube_bad_answers_total',
      help: 'API server answers to a cluster watch (list bodies, watch lines) that came but could not be used; the last objects were kept.',
      labelNames: ['resource', 'reason'] as const,
    }),
    lastSync: gauge(registry, {
      name: 'routability_webhook_watch_last_sync_timestamp_seconds',
      help: 'Unix time of the last successful list or watch event, per watched resource.',
      labelNames: ['resource'] as const,
    }),
  };
}
