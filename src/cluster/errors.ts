/** Turns client-node's errors (ApiException, watch errors, fetch errors) into one-line text. */

/** The HTTP status of a failed list (ApiException.code) or watch (error.statusCode), if any. */
export function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.statusCode === 'number') return e.statusCode;
  if (typeof e.code === 'number') return e.code;
  return undefined;
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
  if (typeof value === 'object' && value !== null) {
    const message = (value as { message?: unknown }).message;
    if (typeof message === 'string' && message !== '') return message;
  }
  return undefined;
}

const HINTS: Record<number, string> = {
  401: 'unauthorized: the credentials were rejected',
  403: 'forbidden: the service account lacks permission',
  404: 'not found: the API is not served',
  410: 'gone: the resource version is too old',
};

/** `HTTP 403 (forbidden: …): servicecidrs.networking.k8s.io is forbidden: …`, or the network error. */
export function describeKubeError(err: unknown): string {
  const status = httpStatusOf(err);
  if (status !== undefined) {
    const detail = statusMessage((err as { body?: unknown }).body);
    const hint = HINTS[status];
    return [`HTTP ${status}${hint ? ` (${hint})` : ''}`, detail].filter(Boolean).join(': ');
  }
  if (err instanceof Error) {
    const message = err.message.split('\n')[0] ?? '';
    const code = (err as { code?: unknown }).code;
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
