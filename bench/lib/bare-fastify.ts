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

/**
 * Fastify with its defaults, plus the project's transport options and/or body
 * reader (both: `bareFastifyApp`), to measure each part on its own.
 */
export function fastifyApp(
  https: HttpsServerOptions | undefined,
  project: { readonly transport: boolean; readonly bodyReader: boolean },
): FastifyInstance {
  const app = Fastify({
    ...(project.transport
      ? transportOptions(MAX_BODY_BYTES, https)
      : { ...(https ? { https } : {}), keepAliveTimeout: 120_000, bodyLimit: MAX_BODY_BYTES }),
    logger: false,
  });
  if (project.bodyReader)
    registerBodyParsers(
      app as unknown as FastifyInstance,
      MAX_BODY_BYTES,
      createBodyBudget({
        ...DEFAULT_BODY_BUDGET,
        budgetBytes: SERVE_FLAGS['max-inflight-body-bytes'].default,
      }),
    );
  return routes(app as unknown as FastifyInstance);
}

export const bareFastifyApp = (https?: HttpsServerOptions): FastifyInstance =>
  fastifyApp(https, { transport: true, bodyReader: true });

export const defaultsFastifyApp = (https?: HttpsServerOptions): FastifyInstance =>
  fastifyApp(https, { transport: false, bodyReader: false });
