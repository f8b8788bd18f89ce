/**
 * docs/metrics.md lists exactly what `/metrics` serves: the built server is started against the
 * fake Kubernetes API (so the watch metrics exist and carry samples), answers one review of each
 * webhook, and is scraped. Names, types and label names are compared in both directions, and every
 * metric the chart's alerts and dashboard query must be served.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeApiServer, ipAddress, serviceCidr } from '../kit/fake-apiserver.js';
import { startServeAgainstApi, type ServingAgainstApi } from '../kit/server-process.js';
import { defaultGateway, gatewayReview } from '../kit/reviews.js';
import { httpGet, httpsPost } from '../kit/http.js';
import { REPO } from './markdown.js';
import { sleep } from '../kit/eventually.js';

const DOC = 'docs/metrics.md';

export interface Served {
  readonly type: string;
  readonly help: string;
  readonly labels: Set<string>;
  samples: number;
}

/** Reads the Prometheus text format: HELP and TYPE per metric, label names from the samples. */
export function parseExposition(text: string): Map<string, Served> {
  const metrics = new Map<string, Served>();
  const get = (name: string) => {
    let m = metrics.get(name);
    if (!m) metrics.set(name, (m = { type: 'untyped', help: '', labels: new Set(), samples: 0 }));
    return m;
  };
  for (const line of text.split('\n')) {
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const m = get(meta[2]!);
      if (meta[1] === 'TYPE') metrics.set(meta[2]!, { ...m, type: meta[3]! });
      else metrics.set(meta[2]!, { ...m, help: meta[3]! });
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? /.exec(line);
    if (!sample) continue;
    const base = [...metrics.keys()].find(
      (n) => sample[1] === n || ['_bucket', '_sum', '_count'].some((s) => sample[1] === n + s),
    );
    if (!base) continue;
    get(base).samples++;
    for (const [, label] of (sample[2] ?? '').matchAll(/(\w+)="(?:[^"\\]|\\.)*"/g))
      if (label !== 'le' && label !== 'quantile') get(base).labels.add(label!);
  }
  return metrics;
}

interface Documented {
  readonly type: string;
  readonly labels: Set<string>;
  readonly line: number;
}

/** Rows `| \`name\` | type | \`label\`, … or — | meaning |` of docs/metrics.md. */
export function parseDoc(text: string): Map<string, Documented> {
  const rows = new Map<string, Documented>();
  text.split('\n').forEach((line, i) => {
    const row = /^\| `([a-z_:][a-z0-9_:]*)` \| (counter|gauge|histogram|summary) \| ([^|]*) \|/.exec(line);
    if (!row) return;
    const labels = new Set([...row[3]!.matchAll(/`(\w+)`/g)].map((m) => m[1]!));
    rows.set(row[1]!, { type: row[2]!, labels, line: i + 1 });
  });
  return rows;
}

const rowFor = (name: string, m: Served) =>
  `| \`${name}\` | ${m.type} | ${
    m.labels.size
      ? [...m.labels]
          .sort()
          .map((l) => `\`${l}\``)
          .join(', ')
      : '—'
  } | ${m.help} |`;

function review(uid: string, operation: 'CREATE' | 'UPDATE', object: unknown, subResource?: string): string {
  const oldObject = operation === 'UPDATE' ? object : null;
  return JSON.stringify(
    gatewayReview({ uid, operation, object, oldObject, ...(subResource ? { subResource } : {}) }),
  );
}

describe(`${DOC} matches what /metrics serves`, () => {
  let fake: FakeApiServer;
  let serving: ServingAgainstApi | undefined;
  let served: Map<string, Served>;
  const documented = parseDoc(readFileSync(join(REPO, DOC), 'utf8'));

  beforeAll(async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    fake.put(
      'ipaddresses',
      ipAddress('10.96.0.10', { resource: 'services', namespace: 'kube-system', name: 'kube-dns' }),
    );
    // A stored Gateway the audit finds in violation, so the labelled audit series carry samples.
    fake.put('gateways', {
      ...defaultGateway([{ type: 'IPAddress', value: '10.200.0.1', routability: 'Cluster' }]),
      metadata: { name: 'stored', namespace: 'default' },
    });
    serving = await startServeAgainstApi(fake.kubeconfigPath, { prefix: 'metrics-doc-' });
    const { server, ca } = serving;
    for (let i = 0; i < 200 && (await httpGet(server.healthPort, '/readyz')).status !== 200; i++)
      await sleep(50);
    const denied = await httpsPost(
      server.port,
      '/validate',
      review(
        'm-1',
        'CREATE',
        defaultGateway([{ type: 'IPAddress', value: '10.200.0.1', routability: 'Cluster' }]),
      ),
      { ca },
    );
    expect(denied.status).toBe(200);
    const mutated = await httpsPost(
      server.port,
      '/mutate',
      review('m-2', 'UPDATE', defaultGateway([], [{ type: 'IPAddress', value: '203.0.113.9' }]), 'status'),
      { ca },
    );
    expect(mutated.status).toBe(200);
    for (let i = 0; i < 300 && !server.logs.some((l) => l['msg'] === 'audit pass done'); i++) await sleep(50);
    const scraped = await httpGet(server.healthPort, '/metrics');
    expect(scraped.status).toBe(200);
    served = parseExposition(scraped.body);
  }, 60_000);

  afterAll(async () => {
    await serving?.stop();
    await fake?.close();
  });

  it('documents every served metric, with its type and labels', () => {
    const missing = [...served].filter(([name]) => !documented.has(name)).map(([name, m]) => rowFor(name, m));
    expect(
      missing,
      `add these rows to ${DOC} (and say what each means for an operator):\n${missing.join('\n')}\n`,
    ).toEqual([]);
    // Label names are read from samples: compared for this project's metrics when they have some
    // (the runtime's default metrics grow labels with what the process happens to be doing).
    const labelsDiffer = (name: string, m: Served, d: Documented) =>
      name.startsWith('routability_webhook_') &&
      m.samples > 0 &&
      [...m.labels].sort().join() !== [...d.labels].sort().join();
    const wrong = [...served]
      .filter(([name, m]) => {
        const d = documented.get(name);
        return d && (d.type !== m.type || labelsDiffer(name, m, d));
      })
      .map(([name, m]) => `${DOC}:${documented.get(name)!.line} should read: ${rowFor(name, m)}`);
    expect(wrong, wrong.join('\n')).toEqual([]);
  });

  it('documents no metric the server does not serve', () => {
    const stale = [...documented]
      .filter(([name]) => !served.has(name))
      .map(([name, d]) => `${DOC}:${d.line} ${name}`);
    expect(stale, `remove these rows from ${DOC}, or serve the metric`).toEqual([]);
  });

  it('serves every metric the chart alerts and dashboard query', () => {
    const chart = join(REPO, 'charts', 'gateway-routability-webhook');
    const text = [
      readFileSync(join(chart, 'templates', 'prometheusrule.yaml'), 'utf8'),
      readFileSync(join(chart, 'files', 'dashboard.json'), 'utf8'),
    ].join('\n');
    const queried = new Set(
      [...text.matchAll(/\b((?:routability_webhook|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!),
    );
    const unknown = [...queried].filter(
      (q) => !served.has(q) && !served.has(q.replace(/_(bucket|sum|count)$/, '')),
    );
    expect(unknown).toEqual([]);
  });
});

describe('the metrics doc parser', () => {
  it('reads a row, and the exposition parser reads labels from samples', () => {
    const doc = parseDoc('| `a_total` | counter | `x`, `y` | what |\n| `b` | gauge | — | what |\n');
    expect(doc.get('a_total')).toMatchObject({ type: 'counter', labels: new Set(['x', 'y']) });
    expect(doc.get('b')?.labels.size).toBe(0);
    const served = parseExposition(
      '# HELP h_seconds t\n# TYPE h_seconds histogram\nh_seconds_bucket{le="1",webhook="v"} 1\nh_seconds_sum{webhook="v"} 1\n',
    );
    expect([...served.get('h_seconds')!.labels]).toEqual(['webhook']);
  });
});
