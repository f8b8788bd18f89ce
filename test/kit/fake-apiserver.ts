/**
 * A small fake Kubernetes API server for tests: real HTTP on a free port, a
 * real kubeconfig file pointing at it, list and watch (`?watch=true`,
 * newline-delimited JSON events with resourceVersions) for cluster-scoped
 * networking.k8s.io resources, and the CustomResourceDefinitions of
 * apiextensions.k8s.io/v1 (get and JSON patch by name; list and watch, with
 * a `metadata.name` field selector as a client limited by RBAC resourceNames
 * sends). It can answer 404 for a version, fail lists, refuse a resource with
 * 403, drop or end watches, and answer 410 Gone.
 *
 * Faults (test/kit/fault-injection.ts) make it a sick API server: per
 * client, resource and verb, `faults.add()` hangs, delays, throttles (429 with
 * Retry-After), fails (5xx, 410), garbles, truncates, inflates answers or keeps
 * watches silent; `refuse()` closes the port, `dropConnections()` cuts every
 * connection at once. Each client (`client(name)`) has a port and kubeconfig
 * of its own over the same objects, so one replica can be partitioned while
 * another is served, and `count()` tells the requests of each apart.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Faults, requestInfo, type RequestInfo, type Verb } from './fault-injection.js';

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

interface Watcher {
  resource: string;
  version: string;
  res: ServerResponse;
  /** From `fieldSelector=metadata.name=NAME`: only that object's events. */
  name: string | undefined;
}

const CRDS = 'customresourcedefinitions';

/** `metadata.name=X` (or `metadata.name==X`) → X; any other selector is refused like an apiserver would. */
function nameSelector(selector: string | undefined): { ok: true; name?: string } | { ok: false } {
  if (selector === undefined || selector === '') return { ok: true };
  const m = /^metadata\.name==?([^,]+)$/.exec(selector);
  return m ? { ok: true, name: m[1]! } : { ok: false };
}

interface Resource {
  group: string;
  kind: string;
  /** Namespaced objects are keyed `namespace/name` and listed across or within namespaces. */
  namespaced: boolean;
  served: Set<string>;
  objects: Map<string, Obj>;
  /** The keys in order, kept until the objects change (a list of 100,000 pages without sorting each time). */
  sortedKeys: string[] | undefined;
  failLists: { count: number; status: number };
  goneNextWatch: 'status' | 'event' | undefined;
  holdNextWatch: Promise<void> | undefined;
  /** GETs by name: the next `count` answer `status`; while `held`, they get no answer. */
  failGets: { count: number; status: number };
  holdGets: Promise<void> | undefined;
}

/**
 * An extra route (test/kit/fake-reports.ts): answers the request and
 * returns true, or returns false to leave it to the built-in handlers.
 */
export type FakeRoute = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean;

export interface RequestRecord extends RequestInfo {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType?: string | undefined;
  /** performance.now() when it arrived. */
  readonly at: number;
  /** Date.now() when it arrived: comparable with times the clients write into objects (a Lease's renewTime). */
  readonly wallAt: number;
  /** The answer's status once it has been sent; undefined while unanswered (held, hung, cut off). */
  status?: number;
  /** performance.now() when the answer had been sent. */
  doneAt?: number;
}

/** A Lease write the fake stored (answered 200 or 201): the request, and the spec it stored. */
export interface LeaseWrite {
  readonly request: RequestRecord;
  readonly spec: Readonly<Record<string, unknown>>;
}

/** One port of the fake, with the kubeconfig that points at it. */
interface Listener {
  readonly name: string;
  readonly server: Server;
  readonly port: number;
  readonly url: string;
  readonly kubeconfigPath: string;
  readonly sockets: Set<Socket>;
  listening: boolean;
}

export const TOKEN = 'fake-token-for-tests';

function kubeconfigText(url: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: fake',
    '  cluster:',
    `    server: ${url}`,
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: tester',
    '  user:',
    `    token: ${TOKEN}`,
    'contexts:',
    '- name: fake',
    '  context: {cluster: fake, user: tester}',
    'current-context: fake',
    '',
  ].join('\n');
}

function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

export class FakeApiServer {
  readonly requests: RequestRecord[] = [];
  /** Watch streams opened (answered 200 and registered), per resource. */
  readonly watchesOpened = new Map<string, number>();
  /** performance.now() of the last watch event written to any watcher. */
  lastEventWrittenAt = 0;
  /** List answers served (every page counts). */
  pagesServed = 0;
  private rv = 100;
  private compactedBelow = 0;
  private readonly history: { rv: number; resource: string; type: string; object: Obj }[] = [];
  private readonly resources = new Map<string, Resource>();
  private readonly watchers = new Set<Watcher>();
  private readonly waiters = new Set<() => void>();
  private readonly routes: FakeRoute[] = [];
  /** Resources every request of which answers 403 (RBAC denies them). */
  private readonly forbidden = new Set<string>();
  /**
   * The CustomResourceDefinitions by name: a view of the stored objects, so
   * `crds.set()` is an ADDED/MODIFIED that watchers see.
   */
  readonly crds = {
    get: (name: string): Obj | undefined => this.resource(CRDS).objects.get(name),
    has: (name: string): boolean => this.resource(CRDS).objects.has(name),
    set: (name: string, object: Record<string, unknown>): void => {
      const metadata = (object['metadata'] ?? {}) as Record<string, unknown>;
      this.put(CRDS, { ...object, metadata: { ...metadata, name } });
    },
    delete: (name: string): void => this.remove(CRDS, name),
  };
  /** coordination.k8s.io/v1 Leases by `namespace/name`, with resourceVersion conflicts as the API server has them. */
  readonly leases = new Map<string, Obj>();
  /** Every Lease write stored, in order, with the client that sent it (holders, renewals, releases). */
  readonly leaseWrites: LeaseWrite[] = [];

  /** Faults in force (test/kit/fault-injection.ts). */
  readonly faults = new Faults();
  private readonly listeners = new Map<string, Listener>();

  private constructor(readonly dir: string) {}

  /** The fake's own port (client `default`). */
  get url(): string {
    return this.listeners.get('default')!.url;
  }

  get kubeconfigPath(): string {
    return this.listeners.get('default')!.kubeconfigPath;
  }

  static async start(): Promise<FakeApiServer> {
    const dir = await mkdtemp(join(tmpdir(), 'fake-apiserver-'));
    const fake = new FakeApiServer(dir);
    await fake.client('default');
    fake.define('servicecidrs', 'networking.k8s.io', 'ServiceCIDR', ['v1', 'v1beta1']);
    fake.define('ipaddresses', 'networking.k8s.io', 'IPAddress', ['v1']);
    fake.define(CRDS, 'apiextensions.k8s.io', 'CustomResourceDefinition', ['v1']);
    fake.define('gateways', 'gateway.networking.k8s.io', 'Gateway', ['v1'], { namespaced: true });
    return fake;
  }

  /**
   * A client of its own: another port over the same objects, and a kubeconfig
   * pointing at it. Its requests are recorded under `name`, and faults can
   * target it alone (a partitioned replica).
   */
  async client(name: string): Promise<{ readonly url: string; readonly kubeconfigPath: string }> {
    const existing = this.listeners.get(name);
    if (existing) return existing;
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const url = `http://127.0.0.1:${port}`;
    const kubeconfigPath = join(this.dir, `kubeconfig-${name}`);
    await writeFile(kubeconfigPath, kubeconfigText(url));
    const listener: Listener = {
      name,
      server,
      port,
      url,
      kubeconfigPath,
      sockets: new Set(),
      listening: true,
    };
    server.on('connection', (socket) => {
      listener.sockets.add(socket);
      socket.on('close', () => listener.sockets.delete(socket));
    });
    server.on('request', (req, res) => this.handle(req, res, name));
    this.listeners.set(name, listener);
    return listener;
  }

  private listenersOf(client: string | undefined): Listener[] {
    if (client === undefined) return [...this.listeners.values()];
    const l = this.listeners.get(client);
    if (!l) throw new Error(`fake apiserver: no client ${client}`);
    return [l];
  }

  /**
   * Closes the port(s): new connections are refused (ECONNREFUSED), open ones
   * are cut. Of one client, or (default) of every client.
   */
  async refuse(client?: string): Promise<void> {
    await Promise.all(
      this.listenersOf(client).map(async (l) => {
        if (!l.listening) return;
        l.listening = false;
        const closed = new Promise<void>((resolve) => l.server.close(() => resolve()));
        for (const s of l.sockets) s.destroy();
        await closed;
      }),
    );
    this.notify();
  }

  /** Opens the port(s) again, on the same port numbers. */
  async accept(client?: string): Promise<void> {
    await Promise.all(
      this.listenersOf(client).map(async (l) => {
        if (l.listening) return;
        await new Promise<void>((resolve, reject) => {
          l.server.once('error', reject);
          l.server.listen(l.port, '127.0.0.1', () => {
            l.server.off('error', reject);
            resolve();
          });
        });
        l.listening = true;
      }),
    );
  }

  /** Destroys every open connection (watches, keep-alive sockets, requests in flight) at once. */
  dropConnections(client?: string): void {
    for (const l of this.listenersOf(client)) for (const s of l.sockets) s.destroy();
    this.notify();
  }

  /** Requests received, of a client, resource and verb (each optional), since a performance.now() time. */
  count(
    filter: { client?: string; resource?: string; verb?: Verb | readonly Verb[]; since?: number } = {},
  ): number {
    const verbs = typeof filter.verb === 'string' ? [filter.verb] : filter.verb;
    return this.requests.filter(
      (r) =>
        (filter.client === undefined || r.client === filter.client) &&
        (filter.resource === undefined || r.resource === filter.resource) &&
        (verbs === undefined || verbs.includes(r.verb)) &&
        (filter.since === undefined || r.at >= filter.since),
    ).length;
  }

  define(
    resource: string,
    group: string,
    kind: string,
    served: readonly string[],
    opts: { namespaced?: boolean } = {},
  ): void {
    this.resources.set(resource, {
      group,
      kind,
      namespaced: opts.namespaced ?? false,
      served: new Set(served),
      objects: new Map(),
      sortedKeys: undefined,
      failLists: { count: 0, status: 500 },
      goneNextWatch: undefined,
      holdNextWatch: undefined,
      failGets: { count: 0, status: 500 },
      holdGets: undefined,
    });
  }

  private resource(name: string): Resource {
    const r = this.resources.get(name);
    if (!r) throw new Error(`fake apiserver: unknown resource ${name}`);
    return r;
  }

  /** Adds a route tried before the built-in ones (after authentication). */
  addRoute(route: FakeRoute): void {
    this.routes.push(route);
  }

  /** Re-checks until() waiters; for routes that change state after the request returns. */
  changed(): void {
    this.notify();
  }

  /** Which versions answer; the others 404. */
  serveVersions(resource: string, versions: readonly string[]): void {
    this.resource(resource).served = new Set(versions);
  }

  /** The next `count` lists of the resource answer `status` (default 500). */
  failLists(resource: string, count: number, code = 500): void {
    this.resource(resource).failLists = { count, status: code };
  }

  /** Every request for the resource answers 403 Forbidden (true), or is served again (false). */
  forbid(resource: string, on = true): void {
    this.resource(resource);
    if (on) this.forbidden.add(resource);
    else this.forbidden.delete(resource);
  }

  /** The next watch answers 410: as an HTTP status, or as an ERROR event then end (what apiservers do). */
  goneOnNextWatch(resource: string, mode: 'status' | 'event' = 'event'): void {
    this.resource(resource).goneNextWatch = mode;
  }

  /** The next watch of the resource gets no answer until the returned function is called. */
  holdNextWatch(resource: string): () => void {
    let release!: () => void;
    this.resource(resource).holdNextWatch = new Promise<void>((r) => (release = r));
    return () => release();
  }

  /** The next `count` GETs of one object of the resource answer `status` (default 500). */
  failGets(resource: string, count: number, code = 500): void {
    this.resource(resource).failGets = { count, status: code };
  }

  /** GETs of one object of the resource get no answer until the returned function is called. */
  holdGets(resource: string): () => void {
    let release!: () => void;
    const r = this.resource(resource);
    r.holdGets = new Promise<void>((done) => (release = done));
    return () => {
      r.holdGets = undefined;
      release();
    };
  }

  /** GETs of single objects of the resource (by name) received so far. */
  getCount(resource: string): number {
    return this.requests.filter((r) => r.method === 'GET' && r.path.includes(`/${resource}/`)).length;
  }

  /** Forget history: watches from an older resourceVersion get 410. */
  compact(): void {
    this.compactedBelow = this.rv;
  }

  /** Adds or replaces an object (ADDED / MODIFIED). Returns the new resourceVersion. */
  put(
    resource: string,
    object: { metadata: { name: string } & Record<string, unknown> } & Record<string, unknown>,
  ): string {
    const r = this.resource(resource);
    const name = this.keyOf(r, object.metadata);
    const type = r.objects.has(name) ? 'MODIFIED' : 'ADDED';
    const rv = ++this.rv;
    const stored: Obj = structuredClone({
      ...object,
      metadata: { ...object.metadata, resourceVersion: String(rv) },
    });
    r.objects.set(name, stored);
    r.sortedKeys = undefined;
    this.emit(resource, type, stored, rv);
    return String(rv);
  }

  /** A stored object (namespaced ones by `namespace/name`), as stored; undefined when there is none. */
  object(resource: string, key: string): Obj | undefined {
    const found = this.resource(resource).objects.get(key);
    return found === undefined ? undefined : structuredClone(found);
  }

  /** Removes an object (DELETED); namespaced objects are named `namespace/name`. */
  remove(resource: string, name: string): void {
    const r = this.resource(resource);
    const old = r.objects.get(name);
    if (!old) throw new Error(`fake apiserver: no ${resource} ${name}`);
    r.objects.delete(name);
    r.sortedKeys = undefined;
    const rv = ++this.rv;
    this.emit(
      resource,
      'DELETED',
      { ...old, metadata: { ...old.metadata, resourceVersion: String(rv) } },
      rv,
    );
  }

  /** Replaces the stored objects without emitting events (a change made while nobody watched). */
  setSilently(resource: string, objects: readonly Obj[]): void {
    const r = this.resource(resource);
    r.sortedKeys = undefined;
    r.objects = new Map(
      objects.map((o) => [
        this.keyOf(r, o.metadata),
        structuredClone({ ...o, metadata: { ...o.metadata, resourceVersion: String(++this.rv) } }),
      ]),
    );
  }

  private keyOf(r: Resource, metadata: Record<string, unknown>): string {
    const name = String(metadata['name']);
    if (!r.namespaced) return name;
    const namespace = metadata['namespace'];
    if (typeof namespace !== 'string' || namespace === '')
      throw new Error(`fake apiserver: ${r.kind} ${name} needs metadata.namespace`);
    return `${namespace}/${name}`;
  }

  watcherCount(resource: string): number {
    return [...this.watchers].filter((w) => w.resource === resource).length;
  }

  listCount(resource: string, version?: string): number {
    return this.requests.filter(
      (r) =>
        r.method === 'GET' &&
        r.query['watch'] !== 'true' &&
        r.path.endsWith(`/${resource}`) &&
        (version === undefined || r.path.includes(`/${version}/`)),
    ).length;
  }

  /**
   * Resolves when `predicate` holds, or rejects after `ms`. It is checked after every request and
   * watch change, and every 10 ms besides: a predicate may read the client's side (a watch's
   * objects), which changes after the last thing this server sees — an event written to an open
   * watch is applied by the client later, with no request to follow it.
   */
  async until(predicate: () => boolean, what: string, ms = 5000): Promise<void> {
    if (predicate()) return;
    await new Promise<void>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        clearInterval(poll);
        this.waiters.delete(check);
      };
      const check = (): void => {
        if (!predicate()) return;
        done();
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`fake apiserver: timed out after ${ms} ms waiting for ${what}`));
      }, ms);
      const poll = setInterval(check, 10);
      this.waiters.add(check);
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Destroys every open watch connection of the resource (a network failure). */
  dropWatches(resource: string): void {
    for (const w of [...this.watchers])
      if (w.resource === resource) {
        this.watchers.delete(w);
        w.res.socket?.destroy();
      }
    this.notify();
  }

  /** Ends every open watch of the resource cleanly (what an apiserver does at its watch timeout). */
  endWatches(resource: string): void {
    for (const w of [...this.watchers])
      if (w.resource === resource) {
        this.watchers.delete(w);
        w.res.end();
      }
    this.notify();
  }

  async close(): Promise<void> {
    this.faults.clearAll();
    this.faults.releaseHeld();
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
    await this.refuse();
    await rm(this.dir, { recursive: true, force: true });
  }

  private emit(resource: string, type: string, object: Obj, rv: number): void {
    this.history.push({ rv, resource, type, object });
    for (const w of this.watchers)
      if (w.resource === resource && this.selects(w, object)) this.writeEvent(w, type, object);
    this.notify();
  }

  private selects(w: Watcher, object: Obj): boolean {
    return w.name === undefined || object.metadata['name'] === w.name;
  }

  private withVersion(resource: string, version: string, object: Obj): Obj {
    const r = this.resource(resource);
    return { ...object, apiVersion: `${r.group}/${version}`, kind: r.kind };
  }

  private writeEvent(w: Watcher, type: string, object: Obj): void {
    w.res.write(`${JSON.stringify({ type, object: this.withVersion(w.resource, w.version, object) })}\n`);
    this.lastEventWrittenAt = performance.now();
  }

  private send(res: ServerResponse, code: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private handle(req: IncomingMessage, res: ServerResponse, client: string): void {
    const url = new URL(req.url ?? '/', this.url);
    const query = Object.fromEntries(url.searchParams);
    const method = req.method ?? 'GET';
    const info = requestInfo(method, url.pathname, query, client);
    const record: RequestRecord = {
      method,
      path: url.pathname,
      query,
      contentType: req.headers['content-type'],
      at: performance.now(),
      wallAt: Date.now(),
      ...info,
    };
    this.requests.push(record);
    res.once('finish', () => {
      record.status = res.statusCode;
      record.doneAt = performance.now();
    });
    const fault = this.faults.take(info);
    if (fault) {
      this.faults.apply(fault, res, info, () => this.serve(req, res, url, record));
      this.notify();
      return;
    }
    this.serve(req, res, url, record);
  }

  private serve(req: IncomingMessage, res: ServerResponse, url: URL, record: RequestRecord): void {
    const { query } = record;
    try {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        this.send(res, 401, status(401, 'Unauthorized', 'Unauthorized'));
        return;
      }
      if (this.routes.some((route) => route(req, res, url))) return;
      const crd = /^\/apis\/apiextensions\.k8s\.io\/v1\/customresourcedefinitions\/([^/]+)$/.exec(
        url.pathname,
      );
      const target = crd ? CRDS : /^\/apis\/[^/]+\/[^/]+\/([^/]+)$/.exec(url.pathname)?.[1];
      if (target !== undefined && this.forbidden.has(target)) {
        this.send(
          res,
          403,
          status(
            403,
            'Forbidden',
            `${target} is forbidden: User "system:serviceaccount:test:tester" cannot ${query['watch'] === 'true' ? 'watch' : req.method === 'PATCH' ? 'patch' : crd ? 'get' : 'list'} resource "${target}"`,
          ),
        );
        return;
      }
      if (crd) {
        this.handleCrd(req, res, decodeURIComponent(crd[1]!));
        return;
      }
      const lease = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/]+))?$/.exec(
        url.pathname,
      );
      if (lease) {
        this.handleLease(
          req,
          res,
          record,
          decodeURIComponent(lease[1]!),
          lease[2] && decodeURIComponent(lease[2]),
        );
        return;
      }
      const one = /^\/apis\/([^/]+)\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
      const named = one ? this.resources.get(one[3]!) : undefined;
      if (one && named && named.group === one[1] && named.served.has(one[2]!) && req.method === 'GET') {
        this.handleGet(res, one[3]!, one[2]!, named, decodeURIComponent(one[4]!));
        return;
      }
      const m = /^\/apis\/([^/]+)\/([^/]+)\/(?:namespaces\/([^/]+)\/)?([^/]+)$/.exec(url.pathname);
      const r = m ? this.resources.get(m[4]!) : undefined;
      const namespace = m?.[3] === undefined ? undefined : decodeURIComponent(m[3]);
      if (
        !m ||
        !r ||
        r.group !== m[1] ||
        !r.served.has(m[2]!) ||
        req.method !== 'GET' ||
        (namespace !== undefined && !r.namespaced)
      ) {
        this.send(res, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
        return;
      }
      const version = m[2]!;
      const resource = m[4]!;
      const selector = nameSelector(query['fieldSelector']);
      if (!selector.ok) {
        this.send(
          res,
          400,
          status(
            400,
            'BadRequest',
            `unable to parse requirement: field label not supported: ${query['fieldSelector']}`,
          ),
        );
        return;
      }
      if (query['watch'] === 'true')
        this.handleWatch(res, resource, version, r, query['resourceVersion'] ?? '', selector.name);
      else this.handleList(res, resource, version, r, { namespace, name: selector.name, query });
    } finally {
      this.notify();
    }
  }

  private handleGet(res: ServerResponse, resource: string, version: string, r: Resource, name: string): void {
    const answer = (): void => {
      if (res.destroyed) return;
      if (r.failGets.count > 0) {
        r.failGets.count--;
        this.send(res, r.failGets.status, status(r.failGets.status, 'InternalError', 'injected get failure'));
        return;
      }
      const object = r.objects.get(name);
      if (object) this.send(res, 200, this.withVersion(resource, version, object));
      else
        this.send(res, 404, {
          ...status(404, 'NotFound', `${resource}.${r.group} "${name}" not found`),
          details: { name, group: r.group, kind: resource },
        });
    };
    if (r.holdGets) void r.holdGets.then(answer);
    else answer();
  }

  private handleList(
    res: ServerResponse,
    resource: string,
    version: string,
    r: Resource,
    select: {
      namespace: string | undefined;
      name: string | undefined;
      query: Readonly<Record<string, string>>;
    },
  ): void {
    if (r.failLists.count > 0) {
      r.failLists.count--;
      this.send(
        res,
        r.failLists.status,
        status(r.failLists.status, 'InternalError', 'injected list failure'),
      );
      return;
    }
    const page = this.page(r, select);
    if (typeof page === 'string') {
      this.send(res, 410, status(410, 'Expired', page));
      return;
    }
    this.send(res, 200, {
      apiVersion: `${r.group}/${version}`,
      kind: `${r.kind}List`,
      metadata: {
        resourceVersion: String(this.rv),
        ...(page.continueToken ? { continue: page.continueToken } : {}),
      },
      items: page.items.map((o) => this.withVersion(resource, version, o)),
    });
  }

  /**
   * `limit`/`continue` as the API server answers them: keys in order, a token
   * naming the last key served. A token from before compact() is expired (410).
   * Unlike a real API server, later pages read the current objects, not a snapshot.
   */
  private page(
    r: Resource,
    select: {
      namespace: string | undefined;
      name: string | undefined;
      query: Readonly<Record<string, string>>;
    },
  ): { items: Obj[]; continueToken: string | undefined } | string {
    const { namespace, name, query } = select;
    r.sortedKeys ??= [...r.objects.keys()].sort();
    const keys =
      namespace === undefined && name === undefined
        ? r.sortedKeys
        : r.sortedKeys.filter(
            (k) =>
              (namespace === undefined || k.startsWith(`${namespace}/`)) &&
              (name === undefined || r.objects.get(k)!.metadata['name'] === name),
          );
    let start = 0;
    const token = query['continue'];
    if (token) {
      const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
        rv: number;
        after: string;
      };
      if (decoded.rv < this.compactedBelow)
        return 'The provided continue parameter is too old to display a consistent list result.';
      // The first key after the last one served (binary search: the keys are sorted).
      let [lo, hi] = [0, keys.length];
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (keys[mid]! > decoded.after) hi = mid;
        else lo = mid + 1;
      }
      start = lo;
    }
    this.pagesServed++;
    const limit = Number(query['limit'] ?? '0');
    const end = limit > 0 ? Math.min(keys.length, start + limit) : keys.length;
    const items = keys.slice(start, end).map((k) => r.objects.get(k)!);
    const continueToken =
      end < keys.length
        ? Buffer.from(JSON.stringify({ rv: this.rv, after: keys[end - 1] })).toString('base64url')
        : undefined;
    return { items, continueToken };
  }

  private handleWatch(
    res: ServerResponse,
    resource: string,
    version: string,
    r: Resource,
    fromText: string,
    name: string | undefined,
  ): void {
    const from = Number(fromText || '0');
    const gone = r.goneNextWatch ?? (from > 0 && from < this.compactedBelow ? 'event' : undefined);
    r.goneNextWatch = undefined;
    if (gone === 'status') {
      this.send(res, 410, status(410, 'Expired', `too old resource version: ${from}`));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    if (gone === 'event') {
      res.end(
        `${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', `too old resource version: ${from}`) })}\n`,
      );
      return;
    }
    const watcher: Watcher = { resource, version, res, name };
    for (const e of this.history)
      if (e.resource === resource && e.rv > from && this.selects(watcher, e.object))
        this.writeEvent(watcher, e.type, e.object);
    res.flushHeaders();
    this.watchers.add(watcher);
    this.watchesOpened.set(resource, (this.watchesOpened.get(resource) ?? 0) + 1);
    res.on('close', () => {
      this.watchers.delete(watcher);
      this.notify();
    });
  }

  private handleLease(
    req: IncomingMessage,
    res: ServerResponse,
    record: RequestRecord,
    namespace: string,
    name: string | undefined,
  ): void {
    const key = name === undefined ? undefined : `${namespace}/${name}`;
    if (req.method === 'GET' && key !== undefined) {
      const found = this.leases.get(key);
      if (found) this.send(res, 200, found);
      else this.send(res, 404, status(404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj;
      const target = `${namespace}/${String(body.metadata['name'])}`;
      const existing = this.leases.get(target);
      if (req.method === 'POST' && key === undefined) {
        if (existing) {
          this.send(
            res,
            409,
            status(
              409,
              'AlreadyExists',
              `leases.coordination.k8s.io "${String(body.metadata['name'])}" already exists`,
            ),
          );
          return;
        }
      } else if (req.method === 'PUT' && key === target) {
        if (!existing) {
          this.send(res, 404, status(404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`));
          return;
        }
        if (body.metadata['resourceVersion'] !== existing.metadata['resourceVersion']) {
          this.send(
            res,
            409,
            status(
              409,
              'Conflict',
              'the object has been modified; please apply your changes to the latest version and try again',
            ),
          );
          return;
        }
      } else {
        this.send(res, 405, status(405, 'MethodNotAllowed', 'method not allowed'));
        return;
      }
      const stored: Obj = {
        ...body,
        metadata: { ...body.metadata, namespace, resourceVersion: String(++this.rv) },
      };
      this.leases.set(target, stored);
      this.leaseWrites.push({ request: record, spec: structuredClone((stored['spec'] ?? {}) as Obj) });
      this.send(res, req.method === 'POST' ? 201 : 200, stored);
    });
  }

  private handleCrd(req: IncomingMessage, res: ServerResponse, name: string): void {
    const crd = this.crds.get(name);
    if (!crd) {
      this.send(
        res,
        404,
        status(404, 'NotFound', `customresourcedefinitions.apiextensions.k8s.io "${name}" not found`),
      );
      return;
    }
    if (req.method === 'GET') {
      this.send(res, 200, this.withVersion(CRDS, 'v1', crd));
      return;
    }
    if (req.method !== 'PATCH') {
      this.send(res, 405, status(405, 'MethodNotAllowed', 'method not allowed'));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.headers['content-type'] !== 'application/json-patch+json') {
        this.send(
          res,
          415,
          status(415, 'UnsupportedMediaType', `unsupported patch type ${req.headers['content-type']}`),
        );
        return;
      }
      const ops = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        op: string;
        path: string;
        value?: unknown;
      }[];
      const next = structuredClone(crd);
      for (const op of ops) {
        const error = applyOp(next, op);
        if (error) {
          this.send(res, 422, status(422, 'Invalid', error));
          return;
        }
      }
      // A spec change is a new generation (on objects that carry one); watchers see it as MODIFIED.
      const generation = next.metadata['generation'];
      this.put(CRDS, {
        ...next,
        metadata: {
          ...next.metadata,
          name,
          ...(typeof generation === 'number' ? { generation: generation + 1 } : {}),
        },
      });
      this.send(res, 200, this.withVersion(CRDS, 'v1', this.crds.get(name)!));
    });
  }
}

/**
 * A deliberately independent mini JSON Patch (test/add/replace) for the fake's
 * CRD PATCH. Like the API server's (evanphx/json-patch), a `test` for null
 * passes on a missing member of an existing parent.
 */
function applyOp(doc: unknown, op: { op: string; path: string; value?: unknown }): string | undefined {
  const parts = op.path
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = parts.pop();
  let parent: unknown = doc;
  for (const p of parts) {
    parent = (parent as Record<string, unknown> | undefined)?.[p];
    if (typeof parent !== 'object' || parent === null) return `path ${op.path}: missing parent`;
  }
  const container = parent as Record<string, unknown>;
  if (last === undefined) return `path ${op.path}: empty`;
  if (op.op === 'test')
    return JSON.stringify(container[last] ?? null) === JSON.stringify(op.value)
      ? undefined
      : `test failed at ${op.path}`;
  if (op.op === 'add' || op.op === 'replace') {
    container[last] = op.value;
    return undefined;
  }
  return `unsupported op ${op.op}`;
}

export function serviceCidr(
  name: string,
  cidrs: readonly string[],
  opts: { terminating?: 'deletionTimestamp' | 'condition' } = {},
): { metadata: { name: string } & Record<string, unknown> } & Record<string, unknown> {
  return {
    metadata: {
      name,
      ...(opts.terminating === 'deletionTimestamp'
        ? {
            deletionTimestamp: '2026-01-01T00:00:00Z',
            finalizers: ['networking.k8s.io/service-cidr-finalizer'],
          }
        : {}),
    },
    spec: { cidrs: [...cidrs] },
    status: {
      conditions: [
        opts.terminating === 'condition'
          ? {
              type: 'Ready',
              status: 'False',
              reason: 'Terminating',
              message: 'being deleted',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            }
          : {
              type: 'Ready',
              status: 'True',
              reason: '',
              message: '',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
      ],
    },
  };
}

/** A Gateway with the given spec and status addresses (realistic metadata, managedFields included). */
export function gateway(
  namespace: string,
  name: string,
  addresses: { spec?: readonly Record<string, unknown>[]; status?: readonly Record<string, unknown>[] },
): { metadata: { name: string } & Record<string, unknown> } & Record<string, unknown> {
  return {
    metadata: {
      name,
      namespace,
      uid: `00000000-0000-4000-8000-${String(name.length).padStart(12, '0')}`,
      generation: 1,
      creationTimestamp: '2026-01-01T00:00:00Z',
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Apply',
          apiVersion: 'gateway.networking.k8s.io/v1',
          time: '2026-01-01T00:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:addresses': {}, 'f:gatewayClassName': {}, 'f:listeners': {} } },
        },
      ],
    },
    spec: {
      gatewayClassName: 'example',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
      ...(addresses.spec ? { addresses: [...addresses.spec] } : {}),
    },
    ...(addresses.status ? { status: { addresses: [...addresses.status] } } : {}),
  };
}

export function ipAddress(
  ip: string,
  parent: { group?: string; resource: string; namespace: string; name: string },
): { metadata: { name: string } & Record<string, unknown> } & Record<string, unknown> {
  return { metadata: { name: ip }, spec: { parentRef: { group: parent.group ?? '', ...parent } } };
}
