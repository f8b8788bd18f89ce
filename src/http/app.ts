/**
 * The webhook's HTTPS application: Fastify with this server's timeouts, the
 * JSON body reader, the answers to requests that reach no route or fail, and
 * the admission routes plugin. Built without listening so tests can
 * `inject()` into it. Dependencies come in.
 */
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import type { RuleInputs } from '../inputs/rule-inputs.js';
import { admissionRoutes, parseTimeoutParam } from './admission-routes.js';
import { HttpError, readJsonBodyWithin } from './body.js';
import { BODY_WAIT_MS, createBodyBudget, DEFAULT_BODY_BUDGET, type BodyBudget } from './body-budget.js';
import { HANDSHAKE_TIMEOUT_MS } from './connections.js';
import { errorAnswer, type Respond } from './error-answer.js';
import type { LimitedLines } from './rate-limited-log.js';
import { MAX_JSON_DEPTH } from './json-depth.js';
import { clip } from './log-text.js';
import type { ServerMetrics } from './metrics.js';
import { createReviewLog, type ReviewLogOptions } from './review-log.js';
import { createReviewRecorders } from './review-record.js';
import { TLS_POLICY } from './tls.js';

export interface AppDeps {
  readonly config: { readonly maxBodyBytes: number };
  readonly logger: Logger;
  /** What the rules read from the cluster (or the flags), built by server/. */
  readonly inputs: RuleInputs;
  readonly metrics: ServerMetrics;
  /** TLS options; absent in tests that only inject. */
  readonly https?: HttpsServerOptions;
  /** Bytes of request bodies in flight; absent: a budget from DEFAULT_BODY_BUDGET. */
  readonly bodyBudget?: BodyBudget;
  /** True once shutdown started: answers then carry `Connection: close`. */
  readonly closing?: () => boolean;
  /** The review log's summary interval and line buckets; absent: a summary a minute. */
  readonly reviewLog?: ReviewLogOptions;
}

// The apiserver's webhook client keeps idle keep-alive connections for up to
// 90 s (Go's http.Transport IdleConnTimeout). If the server closed idle
// connections first, a request sent just as the server closes would fail, so
// the server waits longer than the client: 120 s.
const KEEP_ALIVE_TIMEOUT_MS = 120_000;
// The longest webhook timeout the apiserver allows is 30 s; a request still
// arriving after that has been given up on.
const REQUEST_TIMEOUT_MS = 30_000;
// Headers of a real review arrive at once; a client dribbling them is cut off.
const HEADERS_TIMEOUT_MS = 10_000;

/** The listener's TLS and HTTP timeouts (exported for the bare-Fastify benchmark baseline). */
export function httpsServerOptions(https: HttpsServerOptions): HttpsServerOptions {
  return {
    ...https,
    ...TLS_POLICY,
    headersTimeout: HEADERS_TIMEOUT_MS,
    handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    // Check header/request timeouts every second, not every 30 s (Node's default).
    connectionsCheckingInterval: 1_000,
  };
}

/**
 * Fastify's options that shape the transport: timeouts, shutdown, client
 * errors, body limit, TLS. The webhook adds its logger; the bare-Fastify
 * benchmark baseline uses these alone, so the two differ only in what the
 * webhook adds.
 */
export function transportOptions(
  maxBodyBytes: number,
  https: HttpsServerOptions | undefined,
): FastifyServerOptions & { https?: HttpsServerOptions } {
  return {
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Shutdown: requests on open connections are still answered (with Connection: close);
    // a 503 would fail the apiserver's call and fall to failurePolicy for no reason.
    return503OnClosing: false,
    // Idle connections are closed by the connection guard's drain (connections.ts), which
    // replaces the sweep of server.close(): that sweep cuts answers still being written.
    forceCloseConnections: false,
    clientErrorHandler: answerClientError,
    bodyLimit: maxBodyBytes,
    ...(https ? { https: httpsServerOptions(https) } : {}),
  };
}

function fastifyOptions(deps: AppDeps): FastifyServerOptions & { https?: HttpsServerOptions } {
  return {
    ...transportOptions(deps.config.maxBodyBytes, deps.https),
    loggerInstance: deps.logger,
    // One line per review is written by the review recorder, never Fastify's two per request.
    logController: new LogController({ disableRequestLogging: true }),
    // No per-request child logger: the review line carries the uid, and Fastify's
    // own rare lines do not need a request id.
    childLoggerFactory: (parent) => parent,
  };
}

/**
 * A request Node's parser refuses (two Content-Lengths, a bad header) gets its
 * 400 before the connection closes. Fastify's default writes the answer and
 * destroys the socket at once: with the client's bytes still unread, the
 * kernel then sends a reset that can overtake the answer. Ending the socket
 * sends the answer and a FIN; the socket is destroyed a moment later.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ['408', 'Request Timeout']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? ['431', 'Request Header Fields Too Large']
        : ['400', 'Bad Request'];
  const body = JSON.stringify({ error: message });
  if (socket.writable)
    socket.end(
      `HTTP/1.1 ${code} ${message}\r\nContent-Length: ${body.length}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/**
 * Only application/json bodies are read, within the size and nesting limits
 * and the budget of body bytes in flight.
 */
export function registerBodyParsers(app: FastifyInstance, maxBodyBytes: number, budget: BodyBudget): void {
  const limitsFor = (waitMs: number) => ({
    maxBytes: maxBodyBytes,
    drainBytes: 64 * 1024 * 1024,
    drainMs: 5_000,
    maxDepth: MAX_JSON_DEPTH,
    waitMs,
  });
  // The apiserver sends the same ?timeout= on every call: its limits are built once.
  const usual = limitsFor(BODY_WAIT_MS);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', (request, payload, done) => {
    const length = request.headers['content-length'];
    // Wait for room at most half the apiserver's timeout for this call (default 10 s).
    const timeout = parseTimeoutParam((request.query as Record<string, unknown> | undefined)?.['timeout']);
    const waitMs = Math.min(BODY_WAIT_MS, (timeout ?? 10_000) / 2);
    const declared = length === undefined ? undefined : Number(length);
    const limits = waitMs === BODY_WAIT_MS ? usual : limitsFor(waitMs);
    readJsonBodyWithin(budget, payload, { declaredLength: declared, limits }, done);
  });
  app.addContentTypeParser('*', (_request, _payload, done) => {
    done(new HttpError(400, 'Content-Type must be application/json'));
  });
}

/** Unknown routes get a 404; requests failing outside the admission routes a 400, 413, 429 or 500. */
function registerErrorAnswers(
  app: FastifyInstance,
  logger: Logger,
  respond: Respond,
  lines: LimitedLines,
): void {
  app.setNotFoundHandler((request, reply) => {
    respond(reply, 404, { error: `no route for ${request.method} ${clip(request.url.split('?')[0])}` });
  });
  app.setErrorHandler(errorAnswer(logger, respond, undefined, lines));
}

export function buildApp(deps: AppDeps): FastifyInstance {
  const closing = deps.closing ?? (() => false);
  /** Sends a JSON answer; during shutdown it asks the client to reconnect (to another replica). */
  const respond: Respond = (reply, code, payload) => {
    if (closing()) void reply.header('connection', 'close');
    void reply.code(code).type('application/json').send(payload);
  };
  // Counts answered reviews for the summary line and limits per-request warnings; its last
  // summary is written when the app closes.
  const reviewLog = createReviewLog(deps.logger, deps.reviewLog);
  const recorders = createReviewRecorders(deps.logger, deps.metrics, reviewLog);

  const app = Fastify(fastifyOptions(deps));
  registerBodyParsers(
    app,
    deps.config.maxBodyBytes,
    deps.bodyBudget ?? createBodyBudget(DEFAULT_BODY_BUDGET),
  );
  registerErrorAnswers(app, deps.logger, respond, reviewLog.lines);
  reviewLog.start();
  app.addHook('onClose', (_instance, done) => {
    reviewLog.stop();
    done();
  });
  void app.register(admissionRoutes, {
    inputs: deps.inputs,
    metrics: deps.metrics,
    recorders,
    respond,
    logger: deps.logger,
    lines: reviewLog.lines,
  });
  return app;
}
