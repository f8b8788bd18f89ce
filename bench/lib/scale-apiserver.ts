/**
 * A lean fake Kubernetes API server for the scale benchmark: N realistic
 * IPAddress objects (metadata with labels and managedFields, ~720 bytes of
 * JSON each) generated from their index instead of stored, a few
 * ServiceCIDRs, list (the whole list at once, as the API server answers a
 * list without `limit`), watch, GET by name, IPAddress MODIFIED events at a
 * set rate, and a forced relist (410 Gone on the open watches). The test
 * fake (test/kit/fake-apiserver.ts) keeps every object and its history,
 * which is right for tests and too heavy for 100,000 objects.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TOKEN = 'scale-bench-token';
const GROUP = 'networking.k8s.io';

/** The i-th allocated address: 10.96.0.0/12 holds a million, enough for any N here. */
export function ipOf(i: number): string {
  return `10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
}

function indexOf(name: string): number | undefined {
  const m = /^10\.(\d+)\.(\d+)\.(\d+)$/.exec(name);
  if (!m) return undefined;
  const i = ((Number(m[1]) - 96) << 16) + (Number(m[2]) << 8) + Number(m[3]);
  return i >= 0 && ipOf(i) === name ? i : undefined;
}

function uid(i: number, rv: number): string {
  const hex = (n: number, w: number) => (n >>> 0).toString(16).padStart(w, '0').slice(-w);
  return `${hex(i * 2654435761, 8)}-${hex(i, 4)}-4${hex(rv, 3)}-a${hex(i >> 4, 3)}-${hex(i * 40503, 12)}`;
}

/** One IPAddress as the API server serves it: what the allocator writes for a Service's ClusterIP. */
export function ipAddressJson(i: number, rv: number): string {
  const ip = ipOf(i);
  const time = '2026-11-30T10:00:00Z';
  return JSON.stringify({
    apiVersion: `${GROUP}/v1`,
    kind: 'IPAddress',
    metadata: {
      creationTimestamp: time,
      labels: {
        'ipaddress.kubernetes.io/ip-family': 'IPv4',
        'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io',
      },
      managedFields: [
        {
          apiVersion: `${GROUP}/v1`,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:labels': {
                '.': {},
                'f:ipaddress.kubernetes.io/ip-family': {},
                'f:ipaddress.kubernetes.io/managed-by': {},
              },
            },
            'f:spec': { 'f:parentRef': {} },
          },
          manager: 'kube-apiserver',
          operation: 'Update',
          time,
        },
      ],
      name: ip,
      resourceVersion: String(rv),
      uid: uid(i, rv),
    },
    spec: {
      parentRef: { group: '', name: `svc-${i}`, namespace: `team-${i % 500}`, resource: 'services' },
    },
  });
}

function status(code: number, reason: string, message: string, details?: object): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  });
}

const SERVICE_CIDRS = ['10.96.0.0/12', 'fd00:10:96::/108', '10.200.0.0/16'].map((cidr, n) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'ServiceCIDR',
  metadata: { name: n === 0 ? 'kubernetes' : `extra-${n}`, resourceVersion: '10' },
  spec: { cidrs: [cidr] },
  status: {
    conditions: [
      { type: 'Ready', status: 'True', reason: '', message: '', lastTransitionTime: '2026-11-30T10:00:00Z' },
    ],
  },
}));

export interface ScaleCounters {
  lists: number;
  listBytes: number;
  gets: number;
  watches: number;
  events: number;
}

export class ScaleApiServer {
  readonly counters: ScaleCounters = { lists: 0, listBytes: 0, gets: 0, watches: 0, events: 0 };
  private rv = 1_000;
  private readonly ipWatchers = new Set<ServerResponse>();
  private readonly otherWatchers = new Set<ServerResponse>();
  private readonly sockets = new Set<Socket>();
  private eventTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly dir: string,
    readonly kubeconfigPath: string,
    readonly count: number,
  ) {}

  static async start(count: number): Promise<ScaleApiServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const dir = await mkdtemp(join(tmpdir(), 'scale-apiserver-'));
    const kubeconfigPath = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfigPath,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: scale',
        '  cluster:',
        `    server: ${url}`,
        '    insecure-skip-tls-verify: true',
        'users:',
        '- name: bench',
        '  user:',
        `    token: ${TOKEN}`,
        'contexts:',
        '- name: scale',
        '  context: {cluster: scale, user: bench}',
        'current-context: scale',
        '',
      ].join('\n'),
    );
    const fake = new ScaleApiServer(server, url, dir, kubeconfigPath, count);
    server.on('connection', (s) => {
      fake.sockets.add(s);
      s.on('close', () => fake.sockets.delete(s));
    });
    server.on('request', (req, res) => fake.handle(req, res));
    return fake;
  }

  /** IPAddress MODIFIED events at `perSecond` to every IPAddress watcher (in 10 ms batches). */
  startEvents(perSecond: number): void {
    this.stopEvents();
    const perTick = Math.max(1, Math.round(perSecond / 100));
    let next = 0;
    this.eventTimer = setInterval(() => {
      if (this.ipWatchers.size === 0) {
        this.counters.events += perTick; // the rate is offered either way
        return;
      }
      let text = '';
      for (let k = 0; k < perTick; k++) {
        const i = next++ % this.count;
        text += `{"type":"MODIFIED","object":${ipAddressJson(i, ++this.rv)}}\n`;
      }
      for (const w of this.ipWatchers) w.write(text);
      this.counters.events += perTick;
    }, 10);
  }

  stopEvents(): void {
    if (this.eventTimer) clearInterval(this.eventTimer);
    this.eventTimer = undefined;
  }

  /** Ends the open IPAddress watches with 410 Gone: an informer then lists everything again. */
  forceRelist(): number {
    const n = this.ipWatchers.size;
    for (const w of [...this.ipWatchers]) {
      w.end(`{"type":"ERROR","object":${status(410, 'Expired', 'too old resource version')}}\n`);
      this.ipWatchers.delete(w);
    }
    return n;
  }

  ipWatcherCount(): number {
    return this.ipWatchers.size;
  }

  async close(): Promise<void> {
    this.stopEvents();
    for (const w of [...this.ipWatchers, ...this.otherWatchers]) w.destroy();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.dir, { recursive: true, force: true });
  }

  private send(res: ServerResponse, code: number, text: string): void {
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      this.send(res, 401, status(401, 'Unauthorized', 'Unauthorized'));
      return;
    }
    const watch = url.searchParams.get('watch') === 'true';
    const path = url.pathname;
    if (path === `/apis/${GROUP}/v1/ipaddresses`) {
      if (watch) this.watchIPs(res);
      else this.listIPs(res);
      return;
    }
    const one = new RegExp(`^/apis/${GROUP.replace('.', '\\.')}/v1/ipaddresses/([^/]+)$`).exec(path);
    if (one) {
      this.counters.gets++;
      const name = decodeURIComponent(one[1]!);
      const i = indexOf(name);
      if (i !== undefined && i < this.count) this.send(res, 200, ipAddressJson(i, this.rv));
      else
        this.send(
          res,
          404,
          status(404, 'NotFound', `ipaddresses.${GROUP} "${name}" not found`, {
            name,
            group: GROUP,
            kind: 'ipaddresses',
          }),
        );
      return;
    }
    if (path === `/apis/${GROUP}/v1/servicecidrs`) {
      if (watch) {
        res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
        res.flushHeaders();
        this.otherWatchers.add(res);
        res.on('close', () => this.otherWatchers.delete(res));
      } else
        this.send(
          res,
          200,
          JSON.stringify({
            apiVersion: `${GROUP}/v1`,
            kind: 'ServiceCIDRList',
            metadata: { resourceVersion: String(this.rv) },
            items: SERVICE_CIDRS,
          }),
        );
      return;
    }
    this.send(res, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
  }

  /** The whole list in one answer, written in pieces so this process never holds it whole. */
  private listIPs(res: ServerResponse): void {
    this.counters.lists++;
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    let i = 0;
    const rv = this.rv;
    res.write(
      `{"apiVersion":"${GROUP}/v1","kind":"IPAddressList","metadata":{"resourceVersion":"${rv}"},"items":[`,
    );
    const pump = (): void => {
      while (i < this.count) {
        let chunk = '';
        const end = Math.min(this.count, i + 500);
        for (; i < end; i++) chunk += (i > 0 ? ',' : '') + ipAddressJson(i, rv);
        this.counters.listBytes += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end(']}');
    };
    pump();
  }

  private watchIPs(res: ServerResponse): void {
    this.counters.watches++;
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    this.ipWatchers.add(res);
    res.on('close', () => this.ipWatchers.delete(res));
  }
}
