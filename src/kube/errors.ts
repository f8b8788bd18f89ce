/**
 * The one error type of an API server answer that is not 2xx, and the one
 * describer that turns it (or client-node's ApiException, a watch error, a
 * network error) into one line of text for logs, /readyz and warnings.
 */
import { firstLine } from '../error-text.js';
import { asRecord, numberAt, own } from '../json/record.js';

/** A non-2xx answer: the status, the body as sent, and the Retry-After the server asked for. */
export class KubeApiError extends Error {
  readonly statusCode: number;
  readonly body: string;
  /** Milliseconds the server asked to wait (Retry-After, seconds or an HTTP date); undefined when it did not. */
  readonly retryAfterMs: number | undefined;

  constructor(answer: {
    readonly statusCode: number;
    readonly body: string;
    /** `GET /apis/…`: what was asked. */
    readonly what: string;
    readonly retryAfter?: string | undefined;
    readonly now?: number;
  }) {
    super(`${answer.what}: HTTP ${answer.statusCode}`);
    this.name = 'KubeApiError';
    this.statusCode = answer.statusCode;
    this.body = answer.body;
    this.retryAfterMs = parseRetryAfter(answer.retryAfter, answer.now ?? Date.now());
  }
}

/** What was wrong with an answer the API server sent with a 2xx status. */
export type BadAnswerReason = 'not-json' | 'truncated' | 'too-large' | 'not-a-list' | 'not-an-event';

/**
 * An answer that came (2xx) but cannot be used: not JSON (a proxy's page),
 * cut off, larger than the cap, or not the list or watch event asked for.
 * Callers keep what they had, count it by `reason` and try again later.
 */
export class BadAnswerError extends Error {
  constructor(
    readonly reason: BadAnswerReason,
    message: string,
  ) {
    super(message);
    this.name = 'BadAnswerError';
  }
}

/** A Retry-After longer than this is not waited for longer (a misconfigured proxy must not park a client for a day). */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** How long a failed request's answer asked to wait (its Retry-After, capped); 0 when it did not. */
export function retryAfterWait(err: unknown): number {
  return err instanceof KubeApiError ? Math.min(err.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS) : 0;
}

/** Retry-After as milliseconds from `now`: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined if unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** The HTTP status of a failed request (KubeApiError, a watch's statusCode, ApiException.code), if any. */
export function httpStatusOf(err: unknown): number | undefined {
  const e = asRecord(err);
  return numberAt(e, 'statusCode') ?? numberAt(e, 'code');
}

/** The first line of an error's message (at most 300 characters), for logs and readiness reasons. */
export function oneLine(err: unknown): string {
  return firstLine(err).slice(0, 300) || 'unknown error';
}

function statusMessage(body: unknown): string | undefined {
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body) as unknown;
    } catch {
      return body.trim().slice(0, 200) || undefined;
    }
  }
  const message = own(asRecord(value), 'message');
  return typeof message === 'string' && message !== '' ? message : undefined;
}

const HINTS: Readonly<Record<number, string>> = {
  401: 'unauthorized: the credentials were rejected',
  403: 'forbidden: the service account lacks permission',
  404: 'not found: the API is not served',
  410: 'gone: the resource version is too old',
  429: 'too many requests: the API server asks to retry later',
};

function hintOf(status: number): string | undefined {
  return HINTS[status] ?? (status >= 500 && status < 600 ? 'the API server failed' : undefined);
}

/** What a request needed, for the RBAC hint of a short 403: `get` on `ipaddresses`. */
export interface Permission {
  readonly verb: string;
  readonly resource: string;
}

/**
 * A status in few words, for a warning next to a verdict:
 * `HTTP 401 (credentials rejected)`, `HTTP 403 (forbidden: needs get on ipaddresses)`,
 * `HTTP 500 from the API server`.
 */
export function shortStatus(status: number, needs?: Permission): string {
  if (status === 401) return 'HTTP 401 (credentials rejected)';
  if (status === 403 && needs) return `HTTP 403 (forbidden: needs ${needs.verb} on ${needs.resource})`;
  return `HTTP ${status} from the API server`;
}

/** `HTTP 403 (forbidden: …): servicecidrs.networking.k8s.io is forbidden: …`, or the network error. */
export function describeKubeError(err: unknown): string {
  const status = httpStatusOf(err);
  if (status !== undefined) {
    const detail = statusMessage(own(asRecord(err), 'body'));
    const hint = hintOf(status);
    return [`HTTP ${status}${hint ? ` (${hint})` : ''}`, detail].filter(Boolean).join(': ');
  }
  if (err instanceof Error) {
    const message = firstLine(err);
    const code = own(asRecord(err), 'code');
    return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
  }
  return String(err);
}

/** Rejects after `ms` when the promise has not settled (the request itself is left to the client). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
