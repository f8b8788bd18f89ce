/**
 * Report resources for the fake API server (a namespaced custom resource such
 * as wgpolicyk8s.io/v1alpha2 policyreports or openreports.io/v1alpha1
 * reports): create, get, list (all namespaces or one; `labelSelector` with
 * `key=value` terms; `limit`/`continue`), update with resourceVersion
 * conflicts, delete. With `served = false` every path of the group/version
 * answers 404, as when the CRD is not installed. An optional validator judges
 * writes as the API server's schema validation would (422 Invalid), and the
 * object stored is the validator's (pruned) one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FakeApiServer } from './fake-apiserver.js';

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

export interface FakeReportApi {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}

export interface WriteCheck {
  readonly errors: readonly string[];
  readonly stored: unknown;
}

function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** `a=b,c=d` (equality terms only, as the writer sends) → matcher. */
function labelMatcher(selector: string | null): (labels: Record<string, unknown>) => boolean {
  if (!selector) return () => true;
  const terms = selector.split(',').map((t) => t.split('=') as [string, string]);
  return (labels) => terms.every(([k, v]) => labels[k] === v);
}

export class FakeReports {
  /** false: the CRD is absent, every request of the group/version answers 404. */
  served = true;
  /** Stored objects by `namespace/name`. */
  readonly objects = new Map<string, Obj>();
  /** Writes received, by verb (POST, PUT, DELETE), whatever their answer. */
  readonly writes: { method: string; key: string }[] = [];
  private rv = 1000;

  private constructor(
    private readonly fake: FakeApiServer,
    readonly api: FakeReportApi,
    private readonly check: ((object: unknown) => WriteCheck) | undefined,
  ) {}

  static attach(
    fake: FakeApiServer,
    api: FakeReportApi,
    check?: (object: unknown) => WriteCheck,
  ): FakeReports {
    const store = new FakeReports(fake, api, check);
    fake.addRoute((req, res, url) => store.route(req, res, url));
    return store;
  }

  get(namespace: string, name: string): Obj | undefined {
    return this.objects.get(`${namespace}/${name}`);
  }

  /** Stores an object directly (another tool's report, say). */
  put(object: Obj): void {
    const key = `${String(object.metadata['namespace'])}/${String(object.metadata['name'])}`;
    this.objects.set(key, this.stamp(structuredClone(object)));
    this.fake.changed();
  }

  private stamp(object: Obj): Obj {
    object.metadata['resourceVersion'] = String(++this.rv);
    return { ...object, apiVersion: `${this.api.group}/${this.api.version}`, kind: this.api.kind };
  }

  private route(req: IncomingMessage, res: ServerResponse, url: URL): boolean {
    const prefix = `/apis/${this.api.group}/${this.api.version}/`;
    if (!url.pathname.startsWith(prefix)) return false;
    if (!this.served) {
      send(res, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
      return true;
    }
    const rest = url.pathname.slice(prefix.length).split('/').map(decodeURIComponent);
    const all = rest.length === 1 && rest[0] === this.api.plural;
    const inNs = rest[0] === 'namespaces' && rest[2] === this.api.plural;
    if (!all && !(inNs && (rest.length === 3 || rest.length === 4))) return false;
    const namespace = inNs ? rest[1]! : undefined;
    const name = inNs ? rest[3] : undefined;
    const method = req.method ?? 'GET';
    if (method === 'GET' && name === undefined) this.list(res, url, namespace);
    else if (method === 'GET') this.getOne(res, `${namespace}/${name}`);
    else if (method === 'DELETE' && name !== undefined) this.remove(res, `${namespace}/${name}`);
    else if ((method === 'POST' && name === undefined) || (method === 'PUT' && name !== undefined))
      this.withBody(req, (body) => this.write(res, method, namespace!, name, body));
    else send(res, 405, status(405, 'MethodNotAllowed', 'method not allowed'));
    if (method !== 'POST' && method !== 'PUT') this.fake.changed();
    return true;
  }

  private notFound(res: ServerResponse, key: string): void {
    const name = key.slice(key.indexOf('/') + 1);
    send(res, 404, status(404, 'NotFound', `${this.api.plural}.${this.api.group} "${name}" not found`));
  }

  private list(res: ServerResponse, url: URL, namespace: string | undefined): void {
    const matches = labelMatcher(url.searchParams.get('labelSelector'));
    const keys = [...this.objects.keys()]
      .filter((k) => namespace === undefined || k.startsWith(`${namespace}/`))
      .filter((k) => matches((this.objects.get(k)!.metadata['labels'] ?? {}) as Record<string, unknown>))
      .sort();
    const after = url.searchParams.get('continue');
    const start = after ? keys.findIndex((k) => k > Buffer.from(after, 'base64url').toString()) : 0;
    const from = start < 0 ? keys.length : start;
    const limit = Number(url.searchParams.get('limit') ?? '0');
    const end = limit > 0 ? Math.min(keys.length, from + limit) : keys.length;
    const next = end < keys.length ? Buffer.from(keys[end - 1]!).toString('base64url') : undefined;
    send(res, 200, {
      apiVersion: `${this.api.group}/${this.api.version}`,
      kind: `${this.api.kind}List`,
      metadata: { resourceVersion: String(this.rv), ...(next ? { continue: next } : {}) },
      items: keys.slice(from, end).map((k) => this.objects.get(k)),
    });
  }

  private getOne(res: ServerResponse, key: string): void {
    const found = this.objects.get(key);
    if (found) send(res, 200, found);
    else this.notFound(res, key);
  }

  private remove(res: ServerResponse, key: string): void {
    this.writes.push({ method: 'DELETE', key });
    if (!this.objects.delete(key)) return this.notFound(res, key);
    send(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' });
  }

  private withBody(req: IncomingMessage, then: (body: Obj) => void): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      then(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj);
      this.fake.changed();
    });
  }

  private write(
    res: ServerResponse,
    method: string,
    namespace: string,
    name: string | undefined,
    body: Obj,
  ): void {
    const key = `${namespace}/${name ?? String(body.metadata['name'])}`;
    this.writes.push({ method, key });
    const existing = this.objects.get(key);
    if (method === 'POST' && existing)
      return send(
        res,
        409,
        status(409, 'AlreadyExists', `${this.api.plural}.${this.api.group} "${key}" already exists`),
      );
    if (method === 'PUT' && !existing) return this.notFound(res, key);
    if (method === 'PUT' && body.metadata['resourceVersion'] !== existing!.metadata['resourceVersion'])
      return send(
        res,
        409,
        status(
          409,
          'Conflict',
          'the object has been modified; please apply your changes to the latest version and try again',
        ),
      );
    const checked = this.check?.(body);
    if (checked && checked.errors.length > 0)
      return send(
        res,
        422,
        status(422, 'Invalid', `${this.api.kind} "${key}" is invalid: ${checked.errors.join('; ')}`),
      );
    const stored = this.stamp(structuredClone((checked?.stored ?? body) as Obj));
    stored.metadata['namespace'] = namespace;
    this.objects.set(key, stored);
    send(res, method === 'POST' ? 201 : 200, stored);
  }
}
