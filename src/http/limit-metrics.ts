/** Metrics of the connection and body caps, registered on the registry passed in. */
import type { Counter, Gauge, Registry } from 'prom-client';
import { counter, gauge } from '../metric-registry.js';

export type RefusalReason =
  | 'connection-limit'
  | 'evicted-idle'
  | 'evicted-handshake'
  | 'handshake-timeout'
  | 'tls-error'
  | 'body-budget';

export interface LimitMetrics {
  readonly connectionsOpen: Gauge;
  readonly refused: Counter<'reason'>;
  readonly bodyBytesInFlight: Gauge;
  readonly bodiesWaiting: Gauge;
}

const REASONS: readonly RefusalReason[] = [
  'connection-limit',
  'evicted-idle',
  'evicted-handshake',
  'handshake-timeout',
  'tls-error',
  'body-budget',
];

/** The body budget as the body gauges read it. */
export interface BodyGaugeSource {
  inFlight(): number;
  waiting(): number;
}

/**
 * `bodies`: the body budget, read when the gauges are scraped, so a review
 * sets no gauge (two per body it reserved and two per release, before).
 */
export function createLimitMetrics(
  registry: Registry,
  bodies: () => BodyGaugeSource | undefined = () => undefined,
): LimitMetrics {
  const metrics = {
    connectionsOpen: gauge(registry, {
      name: 'routability_webhook_connections_open',
      help: 'TCP connections open on the webhook port, in any state.',
    }),
    refused: counter(registry, {
      name: 'routability_webhook_refused_total',
      help:
        'Connections closed or requests refused by a cap: connection-limit, evicted-idle, evicted-handshake, ' +
        'handshake-timeout, tls-error, body-budget.',
      labelNames: ['reason'],
    }),
    bodyBytesInFlight: gauge(registry, {
      name: 'routability_webhook_request_body_bytes_in_flight',
      help: 'Bytes of request bodies being received or parsed now (reserved at their Content-Length).',
      collect() {
        const source = bodies();
        if (source) this.set(source.inFlight());
      },
    }),
    bodiesWaiting: gauge(registry, {
      name: 'routability_webhook_request_bodies_waiting',
      help: 'Requests waiting for room in the body budget before their body is read.',
      collect() {
        const source = bodies();
        if (source) this.set(source.waiting());
      },
    }),
  };
  // Every reason from zero, so rate() and alerts see a series before the first refusal.
  for (const reason of REASONS) metrics.refused.labels({ reason }).inc(0);
  return metrics;
}
