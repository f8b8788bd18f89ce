/**
 * The webhook's HTTP layer: transport → decode → rules → encode, built
 * without listening so tests can `inject()` into it. Dependencies come in.
 */
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import Fastify, { LogController, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { answerReview } from '../admission/answer.js';
import { createReviewDecoder } from '../admission/decode.js';
import { ruleContext, type RuleSettings } from '../config/rules.js';
import type { ClusterSources } from '../cluster/types.js';
import type { ServiceRanges } from '../rules/index.js';
import type { RuleContext } from '../rules/index.js';
import { WEBHOOKS, type WebhookName } from '../webhooks/gateway.js';
import { HttpError, readJsonBody } from './body.js';
import { MAX_JSON_DEPTH } from './json-depth.js';
import { clip } from './log-text.js';
import { TLS_POLICY } from './tls.js';
import type { ServerMetrics } from './metrics.js';

export interface AppDeps {
  readonly config: RuleSettings & { readonly maxBodyBytes: number };
  readonly logger: Logger;
  readonly sources: ClusterSources;
  readonly metrics: ServerMetrics;
  /** TLS options; absent in tests that only inject. */
  readonly https?: HttpsServerOptions;
  /** True once shutdown started: answers then carry `Connection: close`. */
  readonly closing?: () => boolean;
}

// The apiserver's webhook client keeps idle keep-alive connections for up to
// 90 s (Go's http.Transport IdleConnTimeout). If the server closed idle
// connections first, a request sent just as the server closes would fail, so
// the server waits longer than the client: 120 s.
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;
// The longest webhook timeout the apiserver allows is 30 s; a request still
// arriving after that has been given up on.
export const REQUEST_TIMEOUT_MS = 30_000;
// Headers of a real review arrive at once; a client dribbling them is cut off.
export const HEADERS_TIMEOUT_MS = 10_000;

/** `?timeout=10s` as the apiserver sends it, in milliseconds. */
export function parseTimeoutParam(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(\d{1,4})s$/.exec(value);
  return m ? Number(m[1]) * 1000 : undefined;
}

export function buildApp(deps: AppDeps) {
  const { logger, metrics, sources, config } = deps;
  const decode = createReviewDecoder();
  const limits = {
    maxBytes: config.maxBodyBytes,
    drainBytes: 64 * 1024 * 1024,
    drainMs: 5_000,
    maxDepth: MAX_JSON_DEPTH,
  };

  // One RuleContext per ranges/allocations snapshot, not per request.
  let cached: { ranges: ServiceRanges; ctx: RuleContext } | undefined;
  const contextNow = (): RuleContext | undefined => {
    const ranges = sources.ranges.current();
    if (!ranges) return undefined;
    if (cached?.ranges !== ranges)
      cached = { ranges, ctx: ruleContext(config, ranges, sources.allocatedIPs) };
    return cached.ctx;
  };

  const closing = deps.closing ?? (() => false);
  /** Sends a JSON answer; during shutdown it asks the client to reconnect (to another replica). */
  const answerWith = (reply: FastifyReply, code: number, payload: string | object) => {
    if (closing()) void reply.header('connection', 'close');
    void reply.code(code).type('application/json').send(payload);
  };

  const app = Fastify({
    loggerInstance: logger,
    // One line per review is written below, never Fastify's two per request.
    logController: new LogController({ disableRequestLogging: true }),
    // No per-request child logger: the review line carries the uid, and Fastify's
    // own rare lines do not need a request id.
    childLoggerFactory: (parent) => parent,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Shutdown: requests on open connections are still answered (with Connection: close);
    // a 503 would fail the apiserver's call and fall to failurePolicy for no reason.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    bodyLimit: config.maxBodyBytes,
    ...(deps.https
      ? {
          https: {
            ...deps.https,
            ...TLS_POLICY,
            headersTimeout: HEADERS_TIMEOUT_MS,
            // Check header/request timeouts every second, not every 30 s (Node's default).
            connectionsCheckingInterval: 1_000,
          } as HttpsServerOptions,
        }
      : {}),
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', (request, payload, done) => {
    const length = request.headers['content-length'];
    readJsonBody(payload, length === undefined ? undefined : Number(length), limits, done);
  });
  app.addContentTypeParser('*', (_request, _payload, done) => {
    done(new HttpError(400, 'Content-Type must be application/json'));
  });

  app.setNotFoundHandler((request, reply) => {
    answerWith(reply, 404, { error: `no route for ${request.method} ${clip(request.url.split('?')[0])}` });
  });

  app.setErrorHandler((err: Error & { statusCode?: number; closeConnection?: boolean }, request, reply) => {
    const status = err.statusCode === 413 ? 413 : err.statusCode && err.statusCode < 500 ? 400 : 500;
    if (status === 500) logger.error({ err, url: clip(request.url) }, 'unexpected error handling a request');
    else
      logger.warn(
        { status, reason: clip(err.message), url: clip(request.url.split('?')[0]) },
        'rejected request',
      );
    if (err.closeConnection || status === 413) void reply.header('connection', 'close');
    const route = request.url.split('?')[0]?.slice(1);
    if (route === 'validate' || route === 'mutate') countRequest(route, 'unknown', 'error', String(status));
    answerWith(reply, status, { error: status === 500 ? 'internal error' : err.message });
  });

  // prom-client hashes label values on every inc(); bind each label set once.
  const counted = new Map<string, { inc(): void }>();
  const countRequest = (webhook: WebhookName, operation: string, outcome: string, code: string) => {
    const key = `${webhook} ${operation} ${outcome} ${code}`;
    let child = counted.get(key);
    if (!child) {
      child = metrics.requests.labels({ webhook, operation, outcome, code });
      counted.set(key, child);
    }
    child.inc();
  };

  for (const name of Object.keys(WEBHOOKS) as WebhookName[]) {
    const webhook = WEBHOOKS[name];
    const duration = metrics.duration.labels({ webhook: name });
    // A plain (not async) handler: no promise per request on the hot path.
    app.post(`/${name}`, (request, reply) => {
      const started = process.hrtime.bigint();
      const ctx = contextNow();
      if (!ctx) {
        const reason = sources.ranges.readiness().reason ?? 'service ranges unknown';
        countRequest(name, 'unknown', 'error', '503');
        answerWith(reply, 503, { error: `not ready: ${reason}` });
        return;
      }
      metrics.inflight.inc();
      let answer;
      try {
        answer = answerReview(decode, (r) => webhook(r, ctx), request.body);
      } finally {
        metrics.inflight.dec();
      }
      if (!answer.ok) {
        logger.warn({ uid: answer.uid, webhook: name, reason: clip(answer.error) }, 'undecodable review');
        countRequest(name, 'unknown', 'error', '400');
        answerWith(reply, 400, { error: answer.error });
        return;
      }
      const { request: review, outcome } = answer;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const outcomeLabel =
        outcome.kind === 'patched' && outcome.patch.length === 0 ? 'allowed' : outcome.kind;
      countRequest(name, review.operation, outcomeLabel, '200');
      duration.observe(seconds);
      for (const code of outcome.codes) metrics.violations.inc({ rule: code });
      const budget = parseTimeoutParam((request.query as Record<string, unknown>)['timeout']);
      logger.info(
        {
          uid: review.uid,
          webhook: name,
          kind: clip(review.kind.kind),
          version: clip(review.kind.version),
          namespace: clip(review.namespace),
          name: clip(review.name),
          operation: review.operation,
          subResource: clip(review.subResource) || undefined,
          dryRun: review.dryRun || undefined,
          decision: outcomeLabel,
          codes: outcome.codes.length > 0 ? outcome.codes : undefined,
          durationMs: Math.round(seconds * 1e6) / 1e3,
          ...(budget !== undefined && seconds * 1000 > budget ? { overTimeout: true } : {}),
        },
        'review',
      );
      answerWith(reply, 200, JSON.stringify(answer.review));
    });
  }
  return app;
}

export type WebhookApp = ReturnType<typeof buildApp>;
