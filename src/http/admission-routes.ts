/**
 * The admission routes, POST /validate and POST /mutate, as a Fastify plugin:
 * transport → decode → rules → encode for each review, with the rule context
 * of the service ranges and the GEP-5093 revision in force. What is logged and counted about each
 * request is the review recorder's business; the in-flight gauge spans a
 * request from its arrival (the body may still be streaming in) to the end of
 * its answer.
 */
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { answerReviewJsonIn, type JsonAnswer as Answer } from '../admission/answer.js';
import { createReviewDecoder, type ReviewDecoder } from '../admission/decode.js';
import type { RuleInputs } from '../inputs/rule-inputs.js';
import type { GepRevision } from '../rules/index.js';
import { WEBHOOKS, type WebhookName } from '../webhooks/gateway.js';
import { errorAnswer, type Respond } from './error-answer.js';
import type { ServerMetrics } from './metrics.js';
import { limitedLines, type LimitedLines } from './rate-limited-log.js';
import type { ReviewRecorder } from './review-record.js';

export interface AdmissionRoutesOptions {
  /** The rule context in force, and why there is none while the inputs are unknown. */
  readonly inputs: RuleInputs;
  readonly metrics: ServerMetrics;
  readonly recorders: (webhook: WebhookName) => ReviewRecorder;
  readonly respond: Respond;
  /** Where a request that fails without a review answer is logged. */
  readonly logger: Logger;
  /** Its per-request lines, limited by kind. */
  readonly lines?: LimitedLines;
}

/**
 * `?timeout=10s` as the apiserver sends it (1 to 4 digits, then `s`), in
 * milliseconds. Read per request by the body reader and the handler, so by
 * character codes rather than a regular expression.
 */
export function parseTimeoutParam(value: unknown): number | undefined {
  if (typeof value !== 'string' || value.length < 2 || value.length > 5) return undefined;
  const last = value.length - 1;
  if (value.charCodeAt(last) !== 0x73) return undefined; // 's'
  let seconds = 0;
  for (let i = 0; i < last; i++) {
    const digit = value.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    seconds = seconds * 10 + digit;
  }
  return seconds * 1000;
}

interface RouteShared {
  readonly inputs: RuleInputs;
  readonly respond: Respond;
  readonly decode: ReviewDecoder;
}

/**
 * Who a review's allocated-IP lookups are for: its namespace and requesting
 * user, so that one flooding tenant cannot use up another's share.
 */
function requesterOf(answer: Answer): { namespace: string; user: string } | undefined {
  if (!answer.ok) return undefined;
  return { namespace: answer.request.namespace ?? '', user: answer.request.userInfo?.username ?? '' };
}

/** process.hrtime.bigint, looked up on the process object once rather than per request. */
const nowNs = process.hrtime.bigint;

/** One review in progress: what its answer is sent and recorded with (one object, no closures). */
interface InProgress {
  readonly request: FastifyRequest<{ Querystring: { timeout?: unknown } }>;
  readonly reply: FastifyReply;
  readonly started: bigint;
  readonly revision: GepRevision;
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
  const finish = (review: InProgress, answer: Answer): void => {
    const { request, reply } = review;
    // Nothing reads the parsed review once it is answered. Left on the request, it lives as long as
    // the answer is being written, through the next young-generation collection: with 39 KB updates
    // each scavenge copied 1.3 MB of such reviews instead of 0.08 MB, and took 4 ms instead of 0.7.
    (request as { body?: unknown }).body = undefined;
    if (!answer.ok) {
      record.undecodable(answer.uid, answer.error);
      respond(reply, 400, { error: answer.error });
      return;
    }
    const seconds = Number(nowNs() - review.started) / 1e9;
    record.answered(
      answer.request,
      answer.outcome,
      { seconds, budgetMs: parseTimeoutParam(request.query.timeout) },
      review.revision,
    );
    respond(reply, 200, answer.json);
  };
  // A plain (not async) handler: no promise per request on the hot path.
  app.post<{ Querystring: { timeout?: unknown } }>(`/${name}`, (request, reply) => {
    const started = nowNs();
    const now = inputs.current();
    if (!now) {
      const reason = inputs.notReadyReason();
      record.failed(503);
      respond(reply, 503, { error: `not ready: ${reason}` });
      return;
    }
    const review: InProgress = { request, reply, started, revision: now.revision };
    if (!prefetch) return finish(review, answerReviewJsonIn(decode, webhook, now.ctx, request.body));
    const decided = prefetch.decide(
      now.ctx,
      (c) => answerReviewJsonIn(decode, webhook, c, request.body),
      requesterOf,
    );
    if (!(decided instanceof Promise)) finish(review, decided);
    // The rare review that needs allocated-IP lookups: answered when they are back.
    else void decided.then((answer) => finish(review, answer)).catch((err: unknown) => void reply.send(err));
  });
}

export const admissionRoutes: FastifyPluginCallback<AdmissionRoutesOptions> = (app, options, done) => {
  const { metrics, recorders, respond, logger } = options;
  const lines = options.lines ?? limitedLines(logger);
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
      route.setErrorHandler(errorAnswer(logger, respond, record, lines));
      reviewRoute(route, name, record, shared);
      registered();
    });
  }
  done();
};
