/**
 * The caps on what clients can hold on the webhook port, assembled from the
 * configuration: the request-body budget (for the app) and the connection
 * guard (for its listener), sharing one set of metrics and one rate limit on
 * their warnings.
 */
import type { Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { createBodyBudget, DEFAULT_BODY_BUDGET, type BodyBudget } from './body-budget.js';
import { connectionCap, guardConnections, HANDSHAKE_TIMEOUT_MS } from './connections.js';
import { createLimitMetrics } from './limit-metrics.js';
import { rateLimitedWarn } from './rate-limited-log.js';

export interface CapSettings {
  readonly maxConnections: number;
  readonly maxInflightBodyBytes: number;
}

export interface Caps {
  readonly bodyBudget: BodyBudget;
  /** Takes over the listener's new connections; call before it listens. */
  guard(server: unknown): void;
}

export function createCaps(settings: CapSettings, registry: Registry, logger: Logger): Caps {
  // The body gauges read the budget when scraped (it exists by then).
  const metrics = createLimitMetrics(registry, () => bodyBudget);
  const warn = rateLimitedWarn(logger);
  const bodyBudget: BodyBudget = createBodyBudget(
    { ...DEFAULT_BODY_BUDGET, budgetBytes: settings.maxInflightBodyBytes },
    (inFlight, waiting) => {
      if (waiting > 0) warn('body-budget', { inFlight, waiting }, 'request-body budget full; requests wait');
    },
    () => {
      metrics.refused.inc({ reason: 'body-budget' });
      warn('body-refused', {}, 'request refused with 429: no room in the request-body budget in time');
    },
  );
  return {
    bodyBudget,
    guard: (server) =>
      guardConnections(
        server as TlsServer,
        {
          maxConnections: connectionCap(settings.maxConnections, logger),
          handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
        },
        { metrics, warn },
      ),
  };
}
