/** The server's Prometheus metrics, registered on a registry passed in (no global registry). */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface ServerMetrics {
  readonly requests: Counter<'webhook' | 'operation' | 'outcome' | 'code'>;
  readonly duration: Histogram<'webhook'>;
  readonly inflight: Gauge;
  readonly violations: Counter<'rule'>;
  readonly certificateExpiry: Gauge;
}

export function createServerMetrics(registry: Registry): ServerMetrics {
  return {
    requests: new Counter({
      name: 'routability_webhook_requests_total',
      help: 'Admission requests by webhook, operation, outcome (allowed, denied, patched, error) and HTTP code.',
      labelNames: ['webhook', 'operation', 'outcome', 'code'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'routability_webhook_request_duration_seconds',
      help: 'Time from request received to answer sent.',
      labelNames: ['webhook'],
      // The apiserver's default timeout is 10 s; answers should take well under a millisecond.
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5],
      registers: [registry],
    }),
    inflight: new Gauge({
      name: 'routability_webhook_inflight_requests',
      help: 'Admission requests being handled now.',
      registers: [registry],
    }),
    violations: new Counter({
      name: 'routability_webhook_violations_total',
      help: 'Findings by rule code (denied, warned, ratcheted or notices).',
      labelNames: ['rule'],
      registers: [registry],
    }),
    certificateExpiry: new Gauge({
      name: 'routability_webhook_certificate_expiry_timestamp_seconds',
      help: 'notAfter of the serving certificate in use, as a Unix time.',
      registers: [registry],
    }),
  };
}
