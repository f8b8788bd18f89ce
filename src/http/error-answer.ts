/**
 * The answer to a request that failed before or instead of a review answer: a
 * 400, 413, 429 or 500 as a JSON error, logged once. The app's root handler
 * answers requests outside the admission routes; each admission route
 * registers its own handler (Fastify encapsulation), which also counts the
 * failure for its webhook. Each refusal can come once per request, so its
 * line is limited by kind (its status): a flood writes a few lines and a count.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { clip } from './log-text.js';
import { limitedLines, type LimitedLines } from './rate-limited-log.js';
import type { ReviewRecorder } from './review-record.js';

/** Sends a JSON answer (an object, or a string already serialised) with an HTTP status. */
export type Respond = (reply: FastifyReply, code: number, payload: string | object) => void;

type RequestError = Error & { statusCode?: number; closeConnection?: boolean };

export type ErrorHandler = (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => void;

function statusOf(err: RequestError): number {
  if (err.statusCode === 413 || err.statusCode === 429) return err.statusCode;
  return err.statusCode && err.statusCode < 500 ? 400 : 500;
}

/**
 * An error handler that logs and answers; `record` counts the failure for a webhook's route;
 * `lines` limits the log lines (shared by the app's handlers; by default the handler's own).
 */
export function errorAnswer(
  logger: Logger,
  respond: Respond,
  record?: ReviewRecorder,
  lines: LimitedLines = limitedLines(logger),
): ErrorHandler {
  return (err: RequestError, request, reply) => {
    const status = statusOf(err);
    if (status === 500)
      lines.write(
        'unexpected error',
        'error',
        { err, url: clip(request.url) },
        'unexpected error handling a request',
      );
    else
      lines.write(
        `rejected ${status}`,
        'warn',
        { status, reason: clip(err.message), url: clip(request.url.split('?')[0]) },
        'rejected request',
      );
    if (err.closeConnection || status === 413) void reply.header('connection', 'close');
    if (status === 429) void reply.header('retry-after', '1');
    record?.failed(status);
    respond(reply, status, { error: status === 500 ? 'internal error' : err.message });
  };
}
