/**
 * Faults for the fake Kubernetes API server (test/kit/fake-apiserver.ts):
 * what a sick API server or network path does to a client, switchable per
 * client, per resource and per verb while a test runs. A fault is added with
 * `fake.faults.add(match, action)` and lasts until `clear()` (or for `count`
 * requests); the connection-level ones (refuse every connection, drop every
 * connection at once) are methods of the fake itself.
 */
import type { ServerResponse } from 'node:http';

export type Verb = 'get' | 'list' | 'watch' | 'write';

/** What a request is, as the faults and the request counts see it. */
export interface RequestInfo {
  /** The listener it came in on (`fake.client(name)`); `default` for the fake's own kubeconfig. */
  readonly client: string;
  /** The plural resource (`servicecidrs`, `leases`, `policyreports`…), undefined for discovery paths. */
  readonly resource: string | undefined;
  readonly verb: Verb;
}

export type FaultAction =
  /** The request is read and never answered (a hung API server or proxy). */
  | { readonly kind: 'hang' }
  /** Answered as usual after `ms`. */
  | { readonly kind: 'delay'; readonly ms: number }
  /** An error Status: 429 (with `Retry-After` when given), 500, 503, 410… */
  | { readonly kind: 'status'; readonly code: number; readonly retryAfterSeconds?: number }
  /** 200 with a body that is not JSON (a proxy's HTML page). A watch gets one such line, then the end. */
  | { readonly kind: 'garbage' }
  /** 200 with JSON cut off in the middle. A watch gets half an event, then the end. */
  | { readonly kind: 'truncated' }
  /** 200 with a well-formed but huge answer (`bytes` of padding): an empty list, or one watch event. */
  | { readonly kind: 'oversized'; readonly bytes: number }
  /** 200 with these lines as the body (newline after each), then the end: any watch line or list body. */
  | { readonly kind: 'lines'; readonly lines: readonly string[] }
  /** Watches: 200 and headers, then silence forever (no events, no end). Other verbs: as `hang`. */
  | { readonly kind: 'silent' }
  /** The connection is destroyed as the request arrives. */
  | { readonly kind: 'reset' };

export interface FaultMatch {
  /** Only requests of this client (default: every client). */
  readonly client?: string;
  /** Only requests of this resource (default: every resource). */
  readonly resource?: string;
  /** Only these verbs (default: every verb). */
  readonly verbs?: readonly Verb[];
}

export interface FaultHandle {
  /** Requests this fault has hit so far. */
  hits(): number;
  /** Ends the fault (requests it holds stay held: a hung connection does not heal itself). */
  clear(): void;
}

interface ActiveFault {
  readonly match: FaultMatch;
  readonly action: FaultAction;
  remaining: number;
  hits: number;
}

const PLURAL_PATH = /^\/apis?\/(?:[^/]+\/)?v[^/]*\/(?:namespaces\/[^/]+\/)?([^/]+)(?:\/([^/]+))?$/;

/** Resource and verb from the path, method and query, as an API server's request info does. */
export function requestInfo(
  method: string,
  path: string,
  query: Readonly<Record<string, string>>,
  client: string,
): RequestInfo {
  const m = PLURAL_PATH.exec(path);
  const resource = m?.[1];
  const named = m?.[2] !== undefined;
  let verb: Verb = 'write';
  if (method === 'GET') verb = query['watch'] === 'true' ? 'watch' : named ? 'get' : 'list';
  return { client, resource, verb };
}

function matches(match: FaultMatch, info: RequestInfo): boolean {
  return (
    (match.client === undefined || match.client === info.client) &&
    (match.resource === undefined || match.resource === info.resource) &&
    (match.verbs === undefined || match.verbs.includes(info.verb))
  );
}

function statusBody(code: number, message: string): string {
  const reasons: Record<number, string> = {
    410: 'Expired',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: reasons[code] ?? 'Unknown',
    code,
  });
}

export class Faults {
  private readonly active: ActiveFault[] = [];
  /** Answers held open by `hang` and `silent`: destroyed by `releaseHeld` (the fake's close). */
  private readonly held = new Set<ServerResponse>();

  /** Adds a fault; the first matching fault (oldest first) decides a request. */
  add(match: FaultMatch, action: FaultAction, opts: { count?: number } = {}): FaultHandle {
    const fault: ActiveFault = { match, action, remaining: opts.count ?? Infinity, hits: 0 };
    this.active.push(fault);
    return {
      hits: () => fault.hits,
      clear: () => {
        const i = this.active.indexOf(fault);
        if (i >= 0) this.active.splice(i, 1);
      },
    };
  }

  /** Ends every fault. */
  clearAll(): void {
    this.active.length = 0;
  }

  /** The fault for this request, counted; undefined when none matches. */
  take(info: RequestInfo): FaultAction | undefined {
    const fault = this.active.find((f) => f.remaining > 0 && matches(f.match, info));
    if (!fault) return undefined;
    fault.remaining--;
    fault.hits++;
    if (fault.remaining <= 0) this.active.splice(this.active.indexOf(fault), 1);
    return fault.action;
  }

  /** Requests held open right now (hung or silent). */
  heldCount(): number {
    return [...this.held].filter((r) => !r.destroyed).length;
  }

  releaseHeld(): void {
    for (const r of this.held) r.destroy();
    this.held.clear();
  }

  /**
   * Answers the request as the fault says. `proceed` answers it normally
   * (used by `delay`).
   */
  apply(action: FaultAction, res: ServerResponse, info: RequestInfo, proceed: () => void): void {
    switch (action.kind) {
      case 'delay': {
        const timer = setTimeout(() => {
          if (!res.destroyed) proceed();
        }, action.ms);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      case 'hang':
        this.hold(res);
        return;
      case 'silent':
        if (info.verb === 'watch') {
          res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
          res.flushHeaders();
        }
        this.hold(res);
        return;
      case 'reset':
        res.socket?.destroy();
        return;
      case 'status':
        this.status(res, action.code, action.retryAfterSeconds);
        return;
      case 'lines': {
        const text = action.lines.map((l) => `${l}\n`).join('');
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
        return;
      }
      default:
        this.badBody(res, action, info);
    }
  }

  private hold(res: ServerResponse): void {
    this.held.add(res);
    res.on('close', () => this.held.delete(res));
  }

  private status(res: ServerResponse, code: number, retryAfterSeconds: number | undefined): void {
    const text = statusBody(code, `injected HTTP ${code}`);
    res.writeHead(code, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...(retryAfterSeconds !== undefined ? { 'retry-after': String(retryAfterSeconds) } : {}),
    });
    res.end(text);
  }

  /** garbage, truncated, oversized: a 200 whose body is wrong. */
  private badBody(
    res: ServerResponse,
    action: Extract<FaultAction, { kind: 'garbage' | 'truncated' | 'oversized' }>,
    info: RequestInfo,
  ): void {
    const watch = info.verb === 'watch';
    let text: string;
    if (action.kind === 'garbage') text = '<html><body>502 Bad Gateway</body></html>\n';
    else if (action.kind === 'truncated')
      text = watch
        ? '{"type":"ADDED","object":{"kind":"Thing","metadata":{"name":"half'
        : '{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"na';
    else {
      const padding = 'x'.repeat(action.bytes);
      text = watch
        ? `${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { annotations: { padding } } } })}\n`
        : JSON.stringify({
            apiVersion: 'v1',
            kind: 'List',
            metadata: { resourceVersion: '1' },
            items: [],
            padding,
          });
    }
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(watch ? { 'transfer-encoding': 'chunked' } : { 'content-length': Buffer.byteLength(text) }),
    });
    res.end(text);
  }
}
