/** Plain-HTTP health and metrics endpoints, on their own port so probes never need TLS. */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

export interface ReadinessCheck {
  readonly name: string;
  readonly check: () => { readonly ok: boolean; readonly reason?: string | undefined };
}

export interface HealthDeps {
  readonly checks: readonly ReadinessCheck[];
  readonly registry: Registry;
  /** Extra detail for `/readyz?verbose`, e.g. range source and watch health. */
  readonly detail?: () => Readonly<Record<string, unknown>>;
}

/** Evaluates every check; not ready names each failing one and why. */
export function evaluateReadiness(checks: readonly ReadinessCheck[]): { ready: boolean; failing: string[] } {
  const failing: string[] = [];
  for (const c of checks) {
    const r = c.check();
    if (!r.ok) failing.push(`${c.name}: ${r.reason ?? 'not ready'}`);
  }
  return { ready: failing.length === 0, failing };
}

export function buildHealthApp(deps: HealthDeps): FastifyInstance {
  const app = Fastify({ logger: false });
  // Liveness: the event loop answers. It must not depend on the cluster, or a
  // broken API server would restart every replica.
  app.get('/healthz', async (_req, reply) => reply.type('text/plain').send('ok\n'));
  app.get('/readyz', async (request, reply) => {
    const { ready, failing } = evaluateReadiness(deps.checks);
    const verbose = Object.prototype.hasOwnProperty.call(request.query ?? {}, 'verbose');
    if (verbose) {
      return reply
        .code(ready ? 200 : 503)
        .type('application/json')
        .send({ ready, failing, ...(deps.detail ? { detail: deps.detail() } : {}) });
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
