/**
 * The admission routes, POST /validate and POST /mutate, as a Fastify plugin:
 * transport → decode → rules → encode for each review, with the rule context
 * of the service ranges and the GEP-5093 revision in force. What is logged and counted about each
 * request is the review recorder's business; the in-flight gauge spans a
 * request from its arrival (the body may still be streaming in) to the end of
 * its answer.
 */
import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import { answerReview, type Answer } from '../admission/answer.js';
import { createReviewDecoder } from '../admission/decode.js';
import { allocationPrefetch, type AllocationPrefetch } from '../cluster/allocation-prefetch.js';
import type { RevisionSource } from '../cluster/crd-revision-source.js';
import type { ClusterSources } from '../cluster/types.js';
import { offlineRevision, ruleContext, type RuleSettings } from '../config/rules.js';
import type { GepRevision, RuleContext, ServiceRanges } from '../rules/index.js';
import { WEBHOOKS, type WebhookName } from '../webhooks/gateway.js';
import type { ServerMetrics } from './metrics.js';
import type { ReviewRecorder } from './review-record.js';

/** Sends a JSON answer (an object, or a string already serialised) with an HTTP status. */
export type Respond = (reply: FastifyReply, code: number, payload: string | object) => void;

export interface AdmissionRoutesOptions {
  readonly settings: RuleSettings;
  readonly sources: ClusterSources;
  /** The GEP-5093 revision in force; absent: --gep-revision read offline (auto = provisional). */
  readonly revision?: RevisionSource | undefined;
  readonly metrics: ServerMetrics;
  readonly recorders: (webhook: WebhookName) => ReviewRecorder;
  readonly respond: Respond;
}

/** `?timeout=10s` as the apiserver sends it, in milliseconds. */
export function parseTimeoutParam(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(\d{1,4})s$/.exec(value);
  return m ? Number(m[1]) * 1000 : undefined;
}

interface ContextNow {
  readonly ctx: RuleContext;
  readonly revision: GepRevision;
}

/**
 * One RuleContext per ranges snapshot and revision, not per request (a CRD
 * change that switches the revision takes effect on the next review);
 * undefined while the ranges or the revision are unknown.
 */
export function contextOfNow(
  settings: RuleSettings,
  sources: ClusterSources,
  revisionSource: RevisionSource | undefined,
  prefetch?: AllocationPrefetch,
): () => ContextNow | undefined {
  const fixed = offlineRevision(settings.gepRevision);
  let cached: { ranges: ServiceRanges; revision: GepRevision; ctx: RuleContext } | undefined;
  return () => {
    const ranges = sources.ranges.current();
    const revision = revisionSource ? revisionSource.current() : fixed;
    if (!ranges || !revision) return undefined;
    if (cached?.ranges !== ranges || cached.revision !== revision)
      cached = { ranges, revision, ctx: ruleContext(settings, ranges, prefetch?.recorder, revision) };
    return cached;
  };
}

/** Why reviews get 503: the ranges first (they were first), then the revision. */
function notReadyReason(sources: ClusterSources, revision: RevisionSource | undefined): string {
  if (!sources.ranges.current()) return sources.ranges.readiness().reason ?? 'service ranges unknown';
  return revision?.readiness().reason ?? 'GEP-5093 revision unknown';
}

export const admissionRoutes: FastifyPluginCallback<AdmissionRoutesOptions> = (app, options, done) => {
  const { sources, metrics, recorders, respond } = options;
  const decode = createReviewDecoder();
  // Allocated IPs are looked up only for the reviews whose rules ask (see allocation-prefetch.ts).
  const prefetch = sources.allocatedIPs ? allocationPrefetch(sources.allocatedIPs) : undefined;
  const contextNow = contextOfNow(options.settings, sources, options.revision, prefetch);

  // One listener shared by every request (a response closes once): no closure per request.
  const ended = () => metrics.inflight.dec();
  app.addHook('onRequest', (_request, reply, next) => {
    metrics.inflight.inc();
    reply.raw.on('close', ended);
    next();
  });

  for (const name of Object.keys(WEBHOOKS) as WebhookName[]) {
    const webhook = WEBHOOKS[name];
    const record = recorders(name);
    // A plain (not async) handler: no promise per request on the hot path.
    app.post<{ Querystring: { timeout?: unknown } }>(`/${name}`, (request, reply) => {
      const started = process.hrtime.bigint();
      const now = contextNow();
      if (!now) {
        const reason = notReadyReason(sources, options.revision);
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
  done();
};
