/** Metrics of the allocated-IP lookups, registered once per registry. */
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { counter, gauge, histogram } from '../../metric-registry.js';

export interface AllocationLookupMetrics {
  /** GETs sent to the API server, by why (lookup or probe) and what came back. */
  readonly requests: Counter<'kind' | 'result'>;
  readonly cacheHits: Counter;
  readonly duration: Histogram;
  /** 1 while lookups get answers; 0 while they fail, before the first answer, or with no IPAddress API. */
  readonly up: Gauge;
  /** Reviews that left an address unchecked, by why (one count per review and reason). */
  readonly uncheckedReviews: Counter<'reason'>;
}

export function allocationLookupMetrics(registry: Registry): AllocationLookupMetrics {
  return {
    requests: counter(registry, {
      name: 'routability_webhook_allocated_ip_lookups_total',
      help: 'GETs of IPAddress objects sent to the API server: kind lookup|probe; result held|free|absent|error.',
      labelNames: ['kind', 'result'] as const,
    }),
    cacheHits: counter(registry, {
      name: 'routability_webhook_allocated_ip_cache_hits_total',
      help: 'Allocated-IP questions answered from the short-lived cache, without a GET.',
    }),
    duration: histogram(registry, {
      name: 'routability_webhook_allocated_ip_lookup_duration_seconds',
      help: 'Time of one IPAddress GET, queueing included (cut off at the lookup timeout).',
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    }),
    up: gauge(registry, {
      name: 'routability_webhook_allocated_ip_lookup_up',
      help: '1 while allocated-IP lookups get answers from the API server, else 0 (see /readyz?verbose).',
    }),
    uncheckedReviews: counter(registry, {
      name: 'routability_webhook_allocated_ip_unchecked_reviews_total',
      help: 'Reviews that left an allocated-IP question unchecked, by reason: api-error|api-unavailable|namespace-share|user-share|queue-full|pushed-out|slot-timeout|review-limit.',
      labelNames: ['reason'] as const,
    }),
  };
}
