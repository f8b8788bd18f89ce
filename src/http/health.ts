/** Plain-HTTP health and metrics endpoints, on their own port so probes never need TLS. */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { evaluateReadiness, readinessDetail, type HealthComponent } from '../readiness.js';
import {
  guardHealthConnections,
  HEALTH_MAX_CONNECTIONS,
  HEALTH_TIMEOUTS,
  healthConnectionMetrics,
} from './health-connections.js';

export interface HealthDeps {
  /** Every part of the server that has a say in readiness or in `/readyz?verbose`. */
  readonly components: readonly HealthComponent[];
  readonly registry: Registry;
  /** Open connections at most (default HEALTH_MAX_CONNECTIONS); at the cap the oldest idle one is closed. */
  readonly maxConnections?: number;
}

export function buildHealthApp(deps: HealthDeps): FastifyInstance {
  const { headersTimeout, requestTimeout, keepAliveTimeout, connectionsCheckingInterval } = HEALTH_TIMEOUTS;
  const app = Fastify({
    logger: false,
    keepAliveTimeout,
    requestTimeout,
    http: { headersTimeout, requestTimeout, connectionsCheckingInterval },
  });
  guardHealthConnections(
    app.server,
    deps.maxConnections ?? HEALTH_MAX_CONNECTIONS,
    healthConnectionMetrics(deps.registry),
  );
  // Liveness: the event loop answers. It must not depend on the cluster, or a
  // broken API server would restart every replica.
  app.get('/healthz', async (_req, reply) => reply.type('text/plain').send('ok\n'));
  app.get('/readyz', async (request, reply) => {
    const { ready, failing } = evaluateReadiness(deps.components);
    const verbose = Object.prototype.hasOwnProperty.call(request.query ?? {}, 'verbose');
    if (verbose) {
      return reply
        .code(ready ? 200 : 503)
        .type('application/json')
        .send({ ready, failing, detail: readinessDetail(deps.components) });
    }
    return reply
      .code(ready ? 200 : 503)
      .type('text/plain')
      .send(ready ? 'ok\n' : `not ready:\n${failing.map((f) => `- ${f}`).join('\n')}\n`);
  });
  app.get('/metrics', async (_req, reply) => {
    const body = await deps.registry.metrics();
    return reply.type(deps.registry.contentType).send(body);
  });
  return app;
}
