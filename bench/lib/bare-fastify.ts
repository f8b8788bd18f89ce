/**
 * The bare-Fastify baseline app: the webhook's Fastify transport options
 * (`transportOptions` of src/http/app.ts) and JSON body reader within the
 * default body budget, answering a fixed, correct AdmissionReview (the
 * request's uid, allowed). No logger, no hooks, no metrics, no rules.
 */
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import Fastify, { type FastifyInstance } from 'fastify';
import { SERVE_FLAGS } from '../../src/config/serve.js';
import { registerBodyParsers, transportOptions } from '../../src/http/app.js';
import { createBodyBudget, DEFAULT_BODY_BUDGET } from '../../src/http/body-budget.js';

export function bareFastifyApp(https?: HttpsServerOptions): FastifyInstance {
  const maxBodyBytes = SERVE_FLAGS['max-body-bytes'].default;
  const app = Fastify({ ...transportOptions(maxBodyBytes, https), logger: false });
  registerBodyParsers(
    app,
    maxBodyBytes,
    createBodyBudget({ ...DEFAULT_BODY_BUDGET, budgetBytes: SERVE_FLAGS['max-inflight-body-bytes'].default }),
  );
  const answer = (body: unknown) => {
    const review = body as { request?: { uid?: unknown } } | null;
    const uid = typeof review?.request?.uid === 'string' ? review.request.uid : '';
    return JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid, allowed: true },
    });
  };
  for (const path of ['/validate', '/mutate'])
    app.post(path, (request, reply) => {
      void reply.code(200).type('application/json').send(answer(request.body));
    });
  return app as unknown as FastifyInstance;
}
