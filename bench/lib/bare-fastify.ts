/**
 * The two Fastify baseline apps, both answering a fixed, correct
 * AdmissionReview (the request's uid, allowed) as a string, with no logger,
 * hooks, metrics or rules:
 *
 * - `defaultsFastifyApp`: Fastify 5 with its defaults (`https`,
 *   `keepAliveTimeout`, `bodyLimit`, its own JSON parser): the framework's
 *   floor, what any Fastify webhook pays;
 * - `bareFastifyApp`: the webhook's own transport options
 *   (`transportOptions` of src/http/app.ts) and JSON body reader within the
 *   default body budget: what the webhook pays before its own layers.
 */
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import Fastify, { type FastifyInstance } from 'fastify';
import { SERVE_FLAGS } from '../../src/config/serve.js';
import { registerBodyParsers, transportOptions } from '../../src/http/app.js';
import { createBodyBudget, DEFAULT_BODY_BUDGET } from '../../src/http/body-budget.js';

const MAX_BODY_BYTES = SERVE_FLAGS['max-body-bytes'].default;

/** The fixed answer for the review in `body`: the raw node baseline's rule. */
function answer(body: unknown): string {
  const review = body as { request?: { uid?: unknown } } | null;
  const uid = typeof review?.request?.uid === 'string' ? review.request.uid : '';
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid, allowed: true },
  });
}

function routes(app: FastifyInstance): FastifyInstance {
  for (const path of ['/validate', '/mutate'])
    app.post(path, (request, reply) => {
      void reply.code(200).type('application/json').send(answer(request.body));
    });
  return app;
}

export function bareFastifyApp(https?: HttpsServerOptions): FastifyInstance {
  const app = Fastify({ ...transportOptions(MAX_BODY_BYTES, https), logger: false });
  registerBodyParsers(
    app,
    MAX_BODY_BYTES,
    createBodyBudget({ ...DEFAULT_BODY_BUDGET, budgetBytes: SERVE_FLAGS['max-inflight-body-bytes'].default }),
  );
  return routes(app as unknown as FastifyInstance);
}

export function defaultsFastifyApp(https?: HttpsServerOptions): FastifyInstance {
  const app = Fastify({
    ...(https ? { https } : {}),
    keepAliveTimeout: 120_000,
    bodyLimit: MAX_BODY_BYTES,
    logger: false,
  });
  return routes(app as unknown as FastifyInstance);
}
