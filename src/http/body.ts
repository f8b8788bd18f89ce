/**
 * The JSON body reader for admission routes. It replaces Fastify's default so
 * that (1) an over-limit body is read and discarded, bounded in bytes and time,
 * before the 413 is sent (RFC 9112 §9.6: otherwise the client, still sending,
 * gets a reset instead of the answer), and (2) JSON is parsed with plain
 * JSON.parse: `__proto__` keys become ordinary own properties, which the rules
 * only ever read, instead of failing the whole review, and (3) a body nested
 * deeper than any the apiserver sends is refused before it is parsed.
 */
import type { IncomingMessage } from 'node:http';
import type { BodyBudget } from './body-budget.js';
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

export function readJsonBody(
  payload: IncomingMessage,
  declaredLength: number | undefined,
  limits: BodyLimits,
  done: (err: Error | null, body?: unknown) => void,
  /** Refuse the request with this error, after reading and discarding its body. */
  refusal?: HttpError,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let discarded = 0;
  let over = false;
  let settled = false;
  let drainTimer: NodeJS.Timeout | undefined;

  const tooLarge = (close: boolean) =>
    refusal
      ? new HttpError(refusal.statusCode, refusal.message, close || refusal.closeConnection)
      : new HttpError(413, `request body is larger than ${limits.maxBytes} bytes`, close);

  const settle = (err: Error | null, body?: unknown) => {
    if (settled) return;
    settled = true;
    if (drainTimer) clearTimeout(drainTimer);
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onError);
    payload.removeListener('close', onClose);
    done(err, body);
  };

  const startDraining = () => {
    over = true;
    chunks.length = 0;
    drainTimer = setTimeout(() => settle(tooLarge(true)), limits.drainMs);
    drainTimer.unref();
  };

  function onData(chunk: Buffer) {
    if (over) {
      discarded += chunk.length;
      if (discarded > limits.drainBytes) settle(tooLarge(true));
      return;
    }
    size += chunk.length;
    if (size > limits.maxBytes) startDraining();
    else chunks.push(chunk);
  }

  function onEnd() {
    if (over) return settle(tooLarge(false));
    if (size === 0) return settle(new HttpError(400, 'empty body: expected an AdmissionReview'));
    const bytes = Buffer.concat(chunks, size);
    chunks.length = 0;
    if (nestsDeeperThan(bytes, limits.maxDepth))
      return settle(new HttpError(400, `body nests deeper than ${limits.maxDepth} levels`));
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch (err) {
      return settle(new HttpError(400, `body is not valid JSON: ${(err as Error).message.slice(0, 120)}`));
    }
    settle(null, parsed);
  }

  function onError(err: Error) {
    settle(new HttpError(400, `request body could not be read: ${err.message}`, true));
  }

  // The connection went away before the body ended (an 'error' may not come).
  function onClose() {
    settle(new HttpError(400, 'request body could not be read: connection closed', true));
  }

  if (payload.destroyed) return onClose();
  if (refusal || (declaredLength !== undefined && declaredLength > limits.maxBytes)) startDraining();
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
  payload.on('close', onClose);
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
  declaredLength: number | undefined,
  limits: BodyLimits & { readonly waitMs: number },
  done: (err: Error | null, body?: unknown) => void,
): void {
  if (declaredLength !== undefined && declaredLength > limits.maxBytes)
    return readJsonBody(payload, declaredLength, limits, done);
  budget.acquire(declaredLength ?? limits.maxBytes, limits.waitMs, (release) => {
    if (!release) {
      const refusal = new HttpError(429, 'too many request bodies in flight; retry', false);
      return readJsonBody(payload, declaredLength, limits, done, refusal);
    }
    readJsonBody(payload, declaredLength, limits, (err, body) => {
      release();
      done(err, body);
    });
  });
}
