/**
 * The JSON body reader for admission routes. It replaces Fastify's default so
 * that (1) an over-limit body is read and discarded, bounded in bytes and time,
 * before the 413 is sent (RFC 9112 §9.6: otherwise the client, still sending,
 * gets a reset instead of the answer), and (2) JSON is parsed with plain
 * JSON.parse: `__proto__` keys become ordinary own properties, which the rules
 * only ever read, instead of failing the whole review, and (3) a body nested
 * deeper than any the apiserver sends is refused before it is parsed.
 */
import { errorMessage } from '../error-text.js';
import type { IncomingMessage } from 'node:http';
import type { BodyBudget, Release } from './body-budget.js';
import { BodyBytes } from './body-bytes.js';
import { nestsDeeperThan } from './json-depth.js';

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** Close the connection after answering (the body was not fully read). */
    readonly closeConnection = false,
  ) {
    super(message);
  }
}

export interface BodyLimits {
  readonly maxBytes: number;
  /** After the limit is passed, how much more is read and discarded. */
  readonly drainBytes: number;
  /** After the limit is passed, how long the rest may take to arrive. */
  readonly drainMs: number;
  /** Deepest nesting accepted (the apiserver's decoder allows 10,000). */
  readonly maxDepth: number;
}

export interface BodyRequest<L extends BodyLimits = BodyLimits> {
  /** The request's `Content-Length`, when it has one. */
  readonly declaredLength: number | undefined;
  readonly limits: L;
  /** Refuse the request with this error, after reading and discarding its body. */
  readonly refusal?: HttpError;
}

export type BodyDone = (err: Error | null, body?: unknown) => void;

/** The body's bytes as JSON, or the 400 that says why they are not an acceptable review body. */
export function parseJsonBody(bytes: Buffer, maxDepth: number): { body: unknown } | HttpError {
  if (bytes.length === 0) return new HttpError(400, 'empty body: expected an AdmissionReview');
  // Valid JSON nested deeper than maxDepth opens maxDepth + 1 brackets and closes each of them, so
  // it is at least 2 × (maxDepth + 1) bytes long. A shorter body is parsed at once (a status write
  // of 14 KB saved the bracket count, 10-15 µs of CPU), and scanned only when the parse fails, so
  // it gets the same answer as a scan before the parse: the nesting message wins over the parse error.
  const mayBeTooDeep = bytes.length >= 2 * (maxDepth + 1);
  if (mayBeTooDeep && nestsDeeperThan(bytes, maxDepth)) return tooDeep(maxDepth);
  try {
    return { body: JSON.parse(bytes.toString('utf8')) as unknown };
  } catch (err) {
    if (!mayBeTooDeep && nestsDeeperThan(bytes, maxDepth)) return tooDeep(maxDepth);
    return new HttpError(400, `body is not valid JSON: ${errorMessage(err).slice(0, 120)}`);
  }
}

const tooDeep = (maxDepth: number) => new HttpError(400, `body nests deeper than ${maxDepth} levels`);

/** Reads one request body: collects it within the size limit, or discards it and refuses. */
class BodyReader {
  private readonly bytes: BodyBytes;
  private discarded = 0;
  private over = false;
  private settled = false;
  private drainTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly payload: IncomingMessage,
    private readonly request: BodyRequest,
    private readonly done: BodyDone,
    /** Gives back the body's room in the budget once it is settled. */
    private readonly release?: Release,
  ) {
    this.bytes = new BodyBytes(request.declaredLength);
  }

  start(): void {
    const { payload, request } = this;
    if (payload.destroyed) return this.onClose();
    const declared = request.declaredLength;
    if (request.refusal || (declared !== undefined && declared > request.limits.maxBytes))
      this.startDraining();
    payload.on('data', this.onData);
    payload.on('end', this.onEnd);
    payload.on('error', this.onError);
    payload.on('close', this.onClose);
  }

  private tooLarge(close: boolean): HttpError {
    const { refusal, limits } = this.request;
    return refusal
      ? new HttpError(refusal.statusCode, refusal.message, close || refusal.closeConnection)
      : new HttpError(413, `request body is larger than ${limits.maxBytes} bytes`, close);
  }

  private settle(err: Error | null, body?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.payload.removeListener('data', this.onData);
    this.payload.removeListener('end', this.onEnd);
    this.payload.removeListener('error', this.onError);
    this.payload.removeListener('close', this.onClose);
    this.release?.();
    this.done(err, body);
  }

  private startDraining(): void {
    this.over = true;
    this.bytes.clear();
    this.drainTimer = setTimeout(() => this.settle(this.tooLarge(true)), this.request.limits.drainMs);
    this.drainTimer.unref();
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.over) {
      this.discarded += chunk.length;
      if (this.discarded > this.request.limits.drainBytes) this.settle(this.tooLarge(true));
    } else if (this.bytes.size + chunk.length > this.request.limits.maxBytes) this.startDraining();
    else this.bytes.append(chunk);
  };

  private readonly onEnd = (): void => {
    if (this.over) return this.settle(this.tooLarge(false));
    const parsed = parseJsonBody(this.bytes.take(), this.request.limits.maxDepth);
    if (parsed instanceof HttpError) this.settle(parsed);
    else this.settle(null, parsed.body);
  };

  private readonly onError = (err: Error): void => {
    this.settle(new HttpError(400, `request body could not be read: ${err.message}`, true));
  };

  // The connection went away before the body ended (an 'error' may not come).
  private readonly onClose = (): void => {
    this.settle(new HttpError(400, 'request body could not be read: connection closed', true));
  };
}

export function readJsonBody(payload: IncomingMessage, request: BodyRequest, done: BodyDone): void {
  new BodyReader(payload, request, done).start();
}

/**
 * readJsonBody within a budget of body bytes in flight: the body is read only
 * once its declared length (or, without one, the largest allowed body) fits.
 * A body over the size limit is not reserved: it is only discarded. A request
 * that waited too long is refused with 429 and `Retry-After`.
 */
export function readJsonBodyWithin(
  budget: BodyBudget,
  payload: IncomingMessage,
  request: BodyRequest<BodyLimits & { readonly waitMs: number }>,
  done: BodyDone,
): void {
  const { declaredLength, limits } = request;
  if (declaredLength !== undefined && declaredLength > limits.maxBytes)
    return readJsonBody(payload, request, done);
  const bytes = declaredLength ?? limits.maxBytes;
  // The usual case, room at once: no callback and no wrapper per request.
  const now = budget.tryAcquire(bytes);
  if (now) return new BodyReader(payload, request, done, now).start();
  budget.acquire(bytes, limits.waitMs, (release) => {
    if (!release) {
      const refusal = new HttpError(429, 'too many request bodies in flight; retry', false);
      return readJsonBody(payload, { ...request, refusal }, done);
    }
    new BodyReader(payload, request, done, release).start();
  });
}
