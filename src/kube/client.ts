/**
 * The one way to send a request to the API server (every call that is not an
 * informer's watch). Credentials, TLS and proxies come from the kubeconfig
 * (kubeconfig-model.ts), applied per request (service-account tokens and exec
 * plugins rotate); the sockets are kept alive in one pool per set of TLS material (a
 * rotated client certificate gets a fresh pool); every request has a deadline
 * by AbortSignal and a bounded answer; a non-2xx answer is one KubeApiError
 * (status, body, Retry-After). Answers are returned as the JSON the server
 * sent: client-node's typed clients rebuild objects into their models, which
 * renames schema members (`x-kubernetes-validations`) and drops unknown ones;
 * callers read them through json/record.ts.
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from './kubeconfig-model.js';
import { readBoundedBody } from './body.js';
import { BadAnswerError, KubeApiError } from './errors.js';

export type KubeMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KubeRequest {
  readonly method?: KubeMethod;
  /** From the server's root: `/apis/coordination.k8s.io/v1/namespaces/x/leases/y`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** The body's media type (default application/json; a JSON Patch is application/json-patch+json). */
  readonly contentType?: string;
  /** The whole request, answer read included. */
  readonly timeoutMs: number;
  /** Largest answer read (default 8 MiB); a list of large objects asks for more. */
  readonly maxBodyBytes?: number;
  /** Cuts the request off early (the caller's own deadline or shutdown). */
  readonly signal?: AbortSignal;
  /** Names the request in errors (default `METHOD path`). */
  readonly what?: string;
  /** Decodes a 2xx answer's text for `json` (default JSON.parse); a throw makes the answer "not JSON". */
  readonly parse?: (text: string) => unknown;
}

/** A streamed request (a watch): answered once its headers arrive, the body read by the caller. */
export interface KubeStreamRequest {
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  /** Until the answer's headers arrive; the stream itself has no deadline here. */
  readonly startTimeoutMs: number;
  /** Ends the request and the stream. */
  readonly signal: AbortSignal;
  readonly what: string;
}

/** Largest error answer of a streamed request read for its message. */
const MAX_STREAM_ERROR_BYTES = 64 * 1024;

/** An answer of any status, for callers that read non-2xx answers themselves. */
export interface KubeAnswer {
  readonly status: number;
  readonly text: string;
  readonly retryAfter: string | undefined;
  /** The texts of the answer's `Warning: 299 - "text"` headers (admission warnings among them), in order. */
  readonly warnings?: readonly string[];
}

/** The texts of RFC 7234 `Warning` headers as the API server sends them (`299 - "text"`, one per header). */
export function warningTexts(rawHeaders: readonly string[]): string[] {
  const texts: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== 'warning') continue;
    const m = /^\d{3} \S+ "((?:[^"\\]|\\.)*)"/.exec(rawHeaders[i + 1]!);
    if (m) texts.push(m[1]!.replace(/\\(.)/g, '$1'));
  }
  return texts;
}

/**
 * When to send a failed request again: the wait before attempt `attempt + 1`,
 * or undefined to give up. Errors are KubeApiError (an answer) or a transport error.
 */
export type RetryPolicy = (error: unknown, attempt: number) => number | undefined;

/** No second attempt (the default: callers retry on their own schedule). */
export const NO_RETRY: RetryPolicy = () => undefined;

export interface KubeClientOptions {
  /** Sockets per pool (default 16). */
  readonly maxSockets?: number;
  readonly retry?: RetryPolicy;
}

export interface KubeClient {
  /** The credentials the client applies per request. */
  readonly config: KubeConfig;
  /** The server URL, for logs. */
  readonly server: string;
  /** The answer's JSON for a 2xx; rejects with a KubeApiError for any other status. */
  json(request: KubeRequest): Promise<unknown>;
  /** The answer whatever its status; rejects only when there is none (network, deadline, size). */
  send(request: KubeRequest): Promise<KubeAnswer>;
  /** A 2xx answer's body as a stream; rejects with a KubeApiError for any other status. */
  stream(request: KubeStreamRequest): Promise<http.IncomingMessage>;
  /** Closes the pooled connections. */
  close(): void;
}

/** Largest body read by default (a Gateway CRD is ~200 kB; a list of one, the same). */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

function sameBytes(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return String(a) === String(b);
}

/** Keep-alive sockets: one pool while the TLS material stays the same. */
class AgentPool {
  private pool: { agent: http.Agent; tls: readonly unknown[] } | undefined;

  constructor(
    private readonly secure: boolean,
    private readonly maxSockets: number,
    private readonly proxied: boolean,
  ) {}

  /** The pool for these credentials; a rotated client certificate gets a fresh one. */
  agentFor(opts: https.RequestOptions): http.Agent {
    // A proxy needs client-node's own agent (it knows the proxy kinds; kubeconfig-auth.ts).
    if (this.proxied && opts.agent) return opts.agent as http.Agent;
    const tls = [opts.ca, opts.cert, opts.key, opts.rejectUnauthorized, opts.servername];
    if (this.pool && this.pool.tls.every((v, i) => sameBytes(v, tls[i]))) return this.pool.agent;
    this.pool?.agent.destroy();
    const common = { keepAlive: true, maxSockets: this.maxSockets, maxFreeSockets: this.maxSockets };
    const agent = this.secure
      ? new https.Agent({
          ...common,
          ...(opts.ca ? { ca: opts.ca } : {}),
          ...(opts.cert ? { cert: opts.cert } : {}),
          ...(opts.key ? { key: opts.key } : {}),
          ...(opts.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
          ...(opts.servername ? { servername: opts.servername } : {}),
        })
      : new http.Agent(common);
    this.pool = { agent, tls };
    return agent;
  }

  close(): void {
    this.pool?.agent.destroy();
    this.pool = undefined;
  }
}

/** The request headers the credentials call for (token, exec plugin, basic auth). */
function headersOf(
  opts: https.RequestOptions,
  payload: string | undefined,
  contentType = 'application/json',
): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const [k, v] of Object.entries(opts.headers ?? {}))
    if (typeof v === 'string' || typeof v === 'number') headers[k] = String(v);
  if (opts.auth) headers['authorization'] = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  if (payload !== undefined) {
    headers['content-type'] = contentType;
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return headers;
}

/** The caller's signal and the deadline as one, and the deadline's own error text. */
function deadline(
  request: { readonly timeoutMs: number; readonly signal?: AbortSignal | undefined },
  what: string,
): { signal: AbortSignal; cancel: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`${what}: no answer within ${request.timeoutMs / 1000} s`)),
    request.timeoutMs,
  );
  timer.unref();
  const outer = request.signal;
  const onAbort = (): void => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    cancel: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}

class Client implements KubeClient {
  readonly server: string;
  private readonly base: URL;
  private readonly pool: AgentPool;
  private readonly retry: RetryPolicy;

  constructor(
    readonly config: KubeConfig,
    options: KubeClientOptions,
  ) {
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = cluster.server;
    this.base = new URL(cluster.server);
    this.pool = new AgentPool(
      this.base.protocol === 'https:',
      options.maxSockets ?? 16,
      Boolean(cluster.proxyUrl),
    );
    this.retry = options.retry ?? NO_RETRY;
  }

  async json(request: KubeRequest): Promise<unknown> {
    const what = request.what ?? `${request.method ?? 'GET'} ${request.path}`;
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await this.send(request);
        if (answer.status < 200 || answer.status >= 300)
          throw new KubeApiError({
            statusCode: answer.status,
            body: answer.text,
            what,
            retryAfter: answer.retryAfter,
          });
        try {
          return request.parse ? request.parse(answer.text) : (JSON.parse(answer.text) as unknown);
        } catch {
          throw new BadAnswerError('not-json', `${what}: the answer is not JSON`);
        }
      } catch (err) {
        const wait = request.signal?.aborted ? undefined : this.retry(err, attempt);
        if (wait === undefined) throw err;
        await new Promise((resolve) => setTimeout(resolve, wait).unref());
      }
    }
  }

  async send(request: KubeRequest): Promise<KubeAnswer> {
    const method = request.method ?? 'GET';
    const what = request.what ?? `${method} ${request.path}`;
    const { signal, cancel } = deadline(request, what);
    const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
    const opened = this.open({
      method,
      path: request.path,
      query: request.query,
      signal,
      payload,
      contentType: request.contentType,
    });
    return opened
      .then(async ({ req, res }) => {
        const text = await readBoundedBody(
          req,
          res,
          request.maxBodyBytes ?? MAX_BODY_BYTES,
          `${what}: answer`,
        );
        return {
          status: res.statusCode ?? 0,
          text,
          retryAfter: res.headers['retry-after'],
          warnings: warningTexts(res.rawHeaders),
        };
      })
      .catch((err: unknown) => {
        // The deadline's own text (`no answer within …`), not the socket's.
        throw signal.aborted && signal.reason instanceof Error ? signal.reason : err;
      })
      .finally(cancel);
  }

  async stream(request: KubeStreamRequest): Promise<http.IncomingMessage> {
    const started = deadline({ timeoutMs: request.startTimeoutMs, signal: request.signal }, request.what);
    // The start deadline ends once the headers are in; the caller's signal still ends the stream.
    const ends = new AbortController();
    const onAbort = (): void => ends.abort(request.signal.reason);
    if (request.signal.aborted) onAbort();
    else request.signal.addEventListener('abort', onAbort, { once: true });
    started.signal.addEventListener('abort', () => ends.abort(started.signal.reason), { once: true });
    try {
      const { req, res } = await this.open({
        method: 'GET',
        path: request.path,
        query: request.query,
        signal: ends.signal,
      });
      res.once('close', () => request.signal.removeEventListener('abort', onAbort));
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) return res;
      const body = await readBoundedBody(req, res, MAX_STREAM_ERROR_BYTES, `${request.what}: answer`).catch(
        () => '',
      );
      throw new KubeApiError({
        statusCode: status,
        body,
        what: request.what,
        retryAfter: res.headers['retry-after'],
      });
    } finally {
      started.cancel();
    }
  }

  /** Sends the request; resolves when the answer's headers arrive. */
  private async open(request: {
    readonly method: KubeMethod;
    readonly path: string;
    readonly query: Readonly<Record<string, string>> | undefined;
    readonly signal: AbortSignal;
    readonly payload?: string | undefined;
    readonly contentType?: string | undefined;
  }): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
    const { method, path, query, signal, payload, contentType } = request;
    const url = new URL(this.base.pathname.replace(/\/+$/, '') + path, this.base);
    for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, value);
    // Credentials per call: service-account tokens and exec plugins rotate.
    const opts: https.RequestOptions = {};
    await this.config.applyToHTTPSOptions(opts);
    const secure = this.base.protocol === 'https:';
    return new Promise((resolve, reject) => {
      let answer: http.IncomingMessage | undefined;
      const req = (secure ? https : http).request(
        url,
        { method, headers: headersOf(opts, payload, contentType), agent: this.pool.agentFor(opts) },
        (res) => {
          answer = res;
          resolve({ req, res });
        },
      );
      // Aborted by hand, not by http.request's `signal`: that one destroys the request with an error
      // even after its answer arrived, when nothing listens any more. Once answered, the answer's
      // reader (which listens) gets the error.
      const onAbort = (): void => {
        const reason = signal.reason instanceof Error ? signal.reason : new Error('aborted');
        if (answer) answer.destroy(reason);
        else req.destroy(reason);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      req.once('close', () => signal.removeEventListener('abort', onAbort));
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.pool.close();
  }
}

/** A client for the cluster these credentials name. */
export function kubeClient(config: KubeConfig, options: KubeClientOptions = {}): KubeClient {
  return new Client(config, options);
}
