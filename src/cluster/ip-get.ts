/**
 * One GET of one IPAddress object (networking.k8s.io/v1) by name, over a
 * keep-alive connection pool of its own. IPAddress objects are named by the
 * canonical IP, so this answers "is this IP held, and by whom" without
 * listing anything. Plain node:http(s): the request can be cut off at a
 * deadline, and the sockets are reused (client-node builds a new agent, and
 * so a new TLS handshake, per call).
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { IPAddressHolder } from '../rules/index.js';
import { readBoundedBody } from './bounded-body.js';
import { holderFromIPAddress, type IPAddressObject } from './ip-addresses.js';

export type GetResult =
  | { readonly kind: 'held'; readonly holder: IPAddressHolder }
  /** No IPAddress of that name: nothing holds the IP. */
  | { readonly kind: 'free' }
  /** The cluster serves no IPAddress API (Kubernetes before 1.33): the rule is skipped. */
  | { readonly kind: 'absent' }
  /** No usable answer; `reason` is a few words for the user's warning. */
  | { readonly kind: 'error'; readonly reason: string; readonly detail: string };

export interface IPAddressGetter {
  get(name: string, signal: AbortSignal): Promise<GetResult>;
  /** Closes the pooled connections. */
  close(): void;
}

// Answers are one small object; anything much larger is not an IPAddress.
const MAX_ANSWER_BYTES = 64 * 1024;

/** A 404 names the object when the API is served and the object is missing; an unserved API answers without. */
export function isObjectNotFound(body: string, name: string): boolean {
  try {
    const status = JSON.parse(body) as { reason?: unknown; details?: { name?: unknown } };
    return status.reason === 'NotFound' && status.details?.name === name;
  } catch {
    return false;
  }
}

export function interpretAnswer(name: string, status: number, body: string): GetResult {
  if (status === 200) {
    let object: IPAddressObject;
    try {
      object = JSON.parse(body) as IPAddressObject;
    } catch {
      return { kind: 'error', reason: 'unreadable answer from the API server', detail: 'invalid JSON' };
    }
    const holder = holderFromIPAddress(object);
    // An IPAddress without a usable parentRef still holds the IP: name the IPAddress itself.
    return {
      kind: 'held',
      holder: holder ?? { group: 'networking.k8s.io', resource: 'ipaddresses', namespace: '', name },
    };
  }
  if (status === 404) return isObjectNotFound(body, name) ? { kind: 'free' } : { kind: 'absent' };
  const reason =
    status === 401
      ? 'HTTP 401 (credentials rejected)'
      : status === 403
        ? 'HTTP 403 (forbidden: needs get on ipaddresses)'
        : `HTTP ${status} from the API server`;
  return {
    kind: 'error',
    reason,
    detail: body.slice(0, 300),
  };
}

function sameBytes(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return String(a) === String(b);
}

/** Keep-alive sockets for the lookups: one pool while the TLS material stays the same. */
class AgentPool {
  private pool: { agent: http.Agent; tls: readonly unknown[] } | undefined;

  constructor(
    private readonly secure: boolean,
    private readonly maxSockets: number,
    private readonly proxied: boolean,
  ) {}

  /** The pool for these credentials; a rotated client certificate gets a fresh one. */
  agentFor(opts: https.RequestOptions): http.Agent {
    // A proxy needs client-node's own agent (it knows the proxy kinds).
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

/** The request headers client-node's credentials call for (token, exec plugin, basic auth). */
function headersOf(opts: https.RequestOptions): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const [k, v] of Object.entries(opts.headers ?? {}))
    if (typeof v === 'string' || typeof v === 'number') headers[k] = String(v);
  if (opts.auth) headers['authorization'] = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  return headers;
}

/** GETs `/apis/networking.k8s.io/v1/ipaddresses/<name>` with the kubeconfig's credentials. */
export function ipAddressGetter(kc: KubeConfig, maxSockets: number): IPAddressGetter {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const base = new URL(cluster.server);
  const secure = base.protocol === 'https:';
  const pool = new AgentPool(secure, maxSockets, Boolean(cluster.proxyUrl));
  const prefix = `${base.pathname.replace(/\/$/, '')}/apis/networking.k8s.io/v1/ipaddresses/`;
  const get = async (name: string, signal: AbortSignal): Promise<GetResult> => {
    // Credentials per call: service-account tokens and exec plugins rotate.
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    return new Promise<GetResult>((resolve, reject) => {
      const request = (secure ? https : http).request(
        {
          protocol: base.protocol,
          hostname: base.hostname.replace(/^\[|\]$/g, ''),
          port: base.port || (secure ? 443 : 80),
          // resourceVersion=0: served from the API server's watch cache, not a quorum read of etcd;
          // at most as stale as that cache, which the answer cache's TTL exceeds anyway.
          path: `${prefix}${encodeURIComponent(name)}?resourceVersion=0`,
          method: 'GET',
          headers: headersOf(opts),
          agent: pool.agentFor(opts),
          signal,
        },
        (response) => {
          readBoundedBody(request, response, MAX_ANSWER_BYTES, 'answer').then(
            (text) => resolve(interpretAnswer(name, response.statusCode ?? 0, text)),
            reject,
          );
        },
      );
      request.on('error', reject);
      request.end();
    });
  };
  return { get, close: () => pool.close() };
}
