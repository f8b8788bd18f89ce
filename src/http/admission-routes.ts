/**
 * The admission routes, POST /validate and POST /mutate, as a Fastify plugin:
 * transport → decode → rules → encode for each review, with the rule context
 * of the service ranges and the GEP-5093 revision in force. What is logged and counted about each
 * request is the review recorder's business; the in-flight gauge spans a
 * request from its arrival (the body may still be streaming in) to the end of
 * its answer.
 */
import type { FastifyInstance, FastifyPluginCallback } from 'fastify';
import type { Logger } from 'pino';
import { answerReview, type Answer } from '../admission/answer.js';
import { createReviewDecoder, type ReviewDecoder } from '../admission/decode.js';
import type { RuleInputs } from '../inputs/rule-inputs.js';
import type { RuleContext } from '../rules/index.js';
import { WEBHOOKS, type WebhookName } from '../webhooks/gateway.js';
import { errorAnswer, type Respond } from './error-answer.js';
import type { ServerMetrics } from './metrics.js';
import type { ReviewRecorder } from './review-record.js';

export interface AdmissionRoutesOptions {
  /** The rule context in force, and why there is none while the inputs are unknown. */
  readonly inputs: RuleInputs;
  readonly metrics: ServerMetrics;
  readonly recorders: (webhook: WebhookName) => ReviewRecorder;
  readonly respond: Respond;
  /** Where a request that fails without a review answer is logged. */
  readonly logger: Logger;
}

/** `?timeout=10s` as the apiserver sends it, in milliseconds. */
export function parseTimeoutParam(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(\d{1,4})s$/.exec(value);
  return m ? Number(m[1]) * 1000 : undefined;
}

interface RouteShared {
  readonly inputs: RuleInputs;
  readonly respond: Respond;
  readonly decode: ReviewDecoder;
}

/** POST /<name>: one review answered with the rule context in force. */
function reviewRoute(
  app: FastifyInstance,
  name: WebhookName,
  record: ReviewRecorder,
  shared: RouteShared,
): void {
  const { inputs, respond, decode } = shared;
  const webhook = WEBHOOKS[name];
  // Allocated IPs are looked up only for the reviews whose rules ask (see allocation-prefetch.ts).
  const prefetch = inputs.prefetch;
  // A plain (not async) handler: no promise per request on the hot path.
  app.post<{ Querystring: { timeout?: unknown } }>(`/${name}`, (request, reply) => {
    const started = process.hrtime.bigint();
    const now = inputs.current();
    if (!now) {
      const reason = inputs.notReadyReason();
      record.failed(503);
      respond(reply, 503, { error: `not ready: ${reason}` });
      return;
    }
    const { ctx, revision } = now;
    const finish = (answer: Answer): void => {
      if (!answer.ok) {
        record.undecodable(answer.uid, answer.error);
        respond(reply, 400, { error: answer.error });
        return;
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      record.answered(
        answer.request,
        answer.outcome,
        { seconds, budgetMs: parseTimeoutParam(request.query.timeout) },
        revision,
      );
      respond(reply, 200, JSON.stringify(answer.review));
    };
    const decide = (c: RuleContext): Answer => answerReview(decode, (r) => webhook(r, c), request.body);
    const decided = prefetch ? prefetch.decide(ctx, decide) : decide(ctx);
    if (!(decided instanceof Promise)) finish(decided);
    // The rare review that needs allocated-IP lookups: answered when they are back.
    else void decided.then(finish).catch((err: unknown) => void reply.send(err));
  });
}

export const admissionRoutes: FastifyPluginCallback<AdmissionRoutesOptions> = (app, options, done) => {
  const { metrics, recorders, respond, logger } = options;
  const shared = { inputs: options.inputs, respond, decode: createReviewDecoder() };

  // One listener shared by every request (a response closes once): no closure per request.
  const ended = () => metrics.inflight.dec();
  app.addHook('onRequest', (_request, reply, next) => {
    metrics.inflight.inc();
    reply.raw.on('close', ended);
    next();
  });

  for (const name of Object.keys(WEBHOOKS) as WebhookName[]) {
    const record = recorders(name);
    // Each webhook's route in its own context (Fastify encapsulation): the handler of its failed
    // requests (a body refused, a lookup that threw) knows by closure which webhook to count.
    void app.register((route, _opts, registered) => {
      route.setErrorHandler(errorAnswer(logger, respond, record));
      reviewRoute(route, name, record, shared);
      registered();
    });
  }
  done();
};
