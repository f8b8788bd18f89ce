/**
 * The server's Prometheus metrics, registered on a registry passed in (no global registry).
 *
 * The two that change on every request, the request counter and the in-flight
 * gauge, are plain numbers on the hot path that prom-client reads when
 * scraped (its `collect` hook): a prom-client `inc()` hashes its label set on
 * every call, which cost about a microsecond per review, while a scrape comes
 * every few seconds at most.
 */
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { counter, gauge, histogram } from '../metric-registry.js';

type RequestLabels = 'webhook' | 'operation' | 'outcome' | 'code';

/** One label set of the request counter: counted here, handed to prom-client when scraped. */
export interface RequestCount {
  inc(): void;
}

/** Requests being handled now. */
export interface InflightGauge {
  inc(): void;
  dec(): void;
}

export interface ServerMetrics {
  /** The request counter's cell for one label set (bind once, `inc()` per request). */
  readonly requests: (labels: Record<RequestLabels, string>) => RequestCount;
  readonly duration: Histogram<'webhook'>;
  readonly inflight: InflightGauge;
  readonly violations: Counter<'rule'>;
  readonly certificateExpiry: Gauge;
}

/** The request counter: cells counted on the hot path, added to prom-client's counter when scraped. */
function requestCounter(registry: Registry): ServerMetrics['requests'] {
  const cells: { labels: Record<RequestLabels, string>; pending: number }[] = [];
  counter(registry, {
    name: 'routability_webhook_requests_total',
    help: 'Admission requests by webhook, operation, outcome (allowed, denied, patched, error) and HTTP code.',
    labelNames: ['webhook', 'operation', 'outcome', 'code'],
    collect() {
      for (const cell of cells)
        if (cell.pending > 0) {
          this.inc(cell.labels, cell.pending);
          cell.pending = 0;
        }
    },
  });
  return (labels) => {
    const cell = { labels, pending: 0 };
    cells.push(cell);
    return {
      inc: () => {
        cell.pending++;
      },
    };
  };
}

/** The in-flight gauge: a number on the hot path, read when scraped. */
function inflightGauge(registry: Registry): InflightGauge {
  let inflight = 0;
  gauge(registry, {
    name: 'routability_webhook_inflight_requests',
    help: 'Admission requests being handled now.',
    collect() {
      this.set(inflight);
    },
  });
  return {
    inc: () => {
      inflight++;
    },
    dec: () => {
      inflight--;
    },
  };
}

export function createServerMetrics(registry: Registry): ServerMetrics {
  return {
    requests: requestCounter(registry),
    duration: histogram(registry, {
      name: 'routability_webhook_request_duration_seconds',
      help: 'Time from request received to answer sent.',
      labelNames: ['webhook'],
      // The apiserver's default timeout is 10 s; answers should take well under a millisecond.
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5],
    }),
    inflight: inflightGauge(registry),
    violations: counter(registry, {
      name: 'routability_webhook_violations_total',
      help: 'Findings by rule code (denied, warned, ratcheted or notices).',
      labelNames: ['rule'],
    }),
    certificateExpiry: gauge(registry, {
      name: 'routability_webhook_certificate_expiry_timestamp_seconds',
      help: 'notAfter of the serving certificate in use, as a Unix time.',
    }),
  };
}
