import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { kubeClient } from '../../src/kube/client.js';
import { KubeConfig } from '../../src/kube/kubeconfig-model.js';
import { gatewayPageFetcher, gatewayPages, type FetchGatewayPage } from '../../src/audit/gateway-pages.js';
import { auditPass, type AuditFinding } from '../../src/audit/pass.js';
import type { JudgedGateway } from '../../src/findings/evaluate.js';
import { judgeWithContext } from '../../src/audit/judge.js';
import type { RuleContext } from '../../src/rules/index.js';
import { context as baseContext, ranges } from '../kit/gateways.js';
import { FakeApiServer, gateway } from '../kit/fake-apiserver.js';
import { finding } from './results.js';

/** The suite's base context over the given service ranges, status findings as warnings. */
function context(cidrs: readonly string[]): RuleContext {
  return baseContext({ ranges: ranges(...cidrs), statusPolicy: 'warn' });
}

/** A fetcher over fixed pages; `expireAt` makes the continue token of that page answer 410 once. */
function pagesOf(
  pages: readonly unknown[][],
  expireAt?: number,
): { fetch: FetchGatewayPage; calls: (string | undefined)[] } {
  const calls: (string | undefined)[] = [];
  let expired = false;
  const fetch: FetchGatewayPage = (token) => {
    calls.push(token);
    const index = token === undefined ? 0 : Number(token);
    if (expireAt !== undefined && index === expireAt && !expired) {
      expired = true;
      return Promise.reject(Object.assign(new Error('Expired'), { code: 410 }));
    }
    return Promise.resolve({
      items: pages[index]!,
      continueToken: index + 1 < pages.length ? String(index + 1) : undefined,
    });
  };
  return { fetch, calls };
}

/** A judge's answer with no findings, for passes that count or time the judging only. */
const nothing: JudgedGateway = { namespace: undefined, name: undefined, uid: undefined, findings: [] };

const inside = { type: 'IPAddress', value: '10.96.0.20', routability: 'Cluster' };
const outside = { type: 'IPAddress', value: '192.168.7.7', routability: 'Cluster' };

describe('gatewayPages', () => {
  it('follows continue tokens until the last page', async () => {
    const { fetch, calls } = pagesOf([[1, 2], [3], [4]]);
    const seen: unknown[] = [];
    for await (const page of gatewayPages(fetch)) seen.push(...page.items);
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(calls).toEqual([undefined, '1', '2']);
  });

  it('starts over once when a continue token expires, and marks the restart', async () => {
    const { fetch, calls } = pagesOf([[1], [2], [3]], 2);
    const restarts: number[] = [];
    for await (const page of gatewayPages(fetch)) if (page.restarted) restarts.push(page.page);
    expect(calls).toEqual([undefined, '1', '2', undefined, '1', '2']);
    expect(restarts).toEqual([1]);
  });

  it('reports any other failure with the API named', async () => {
    const fetch: FetchGatewayPage = () => Promise.reject(Object.assign(new Error('no'), { code: 403 }));
    await expect(async () => {
      for await (const _ of gatewayPages(fetch)) void _;
    }).rejects.toThrow(/listing Gateways \(gateway\.networking\.k8s\.io\/v1\): HTTP 403/);
  });
});

describe('auditPass', () => {
  const judge = judgeWithContext(context(['10.96.0.0/16']));

  it('keeps findings only, counts every Gateway, and tallies codes by scope', async () => {
    const { fetch } = pagesOf([
      [gateway('a', 'ok', { spec: [inside] }), gateway('a', 'bad', { spec: [outside] })],
      [gateway('b', 'status', { status: [{ type: 'IPAddress', value: '10.96.0.9' }] })],
    ]);
    const result = await auditPass(gatewayPages(fetch), judge);
    expect(result.gateways).toBe(3);
    expect(result.namespaces).toBe(2);
    expect(result.pages).toBe(2);
    expect(result.audited).toEqual(['a/ok', 'a/bad', 'b/status']);
    expect(result.flagged.map((g) => `${g.namespace}/${g.name}`)).toEqual(['a/bad', 'b/status']);
    expect(result.violations).toBe(1);
    const codes = result.byCode.map((c) => `${c.code}/${c.check}/${c.severity}=${c.count}`);
    expect(codes).toContain('ClusterAddressOutsideServiceRange/spec/violation=1');
    expect(codes.some((c) => c.startsWith('ExternalAddressInsideServiceRange/status/warning='))).toBe(true);
    const bad = result.flagged[0]!.findings[0]!;
    expect(bad.field).toBe('spec.addresses[0].value');
    expect(bad.message).toContain('192.168.7.7');
  });

  it('forgets what it counted before a restarted list', async () => {
    const { fetch } = pagesOf(
      [[gateway('a', 'one', { spec: [outside] })], [gateway('a', 'two', { spec: [outside] })]],
      1,
    );
    const result = await auditPass(gatewayPages(fetch), judge);
    expect(result.gateways).toBe(2);
    expect(result.violations).toBe(2);
  });

  it('lists only the judged Gateways `audited` asks for (every one by default)', async () => {
    const { fetch } = pagesOf([
      [gateway('a', 'ok', { spec: [inside] }), gateway('a', 'bad', { spec: [outside] })],
      [gateway('b', 'other', {})],
    ]);
    const asked: string[] = [];
    const result = await auditPass(gatewayPages(fetch), judge, {
      audited: (key) => {
        asked.push(key);
        return key !== 'a/bad';
      },
    });
    expect(asked).toEqual(['a/ok', 'a/bad', 'b/other']);
    expect(result.audited).toEqual(['a/ok', 'b/other']);
    expect(result.gateways).toBe(3);
    expect(result.flagged.map((g) => g.name)).toEqual(['bad']);
  });

  it('yields to the event loop while judging', async () => {
    let pauses = 0;
    const items = Array.from({ length: 120 }, (_, i) => gateway('n', `g${i}`, {}));
    const { fetch } = pagesOf([items]);
    const judgeAll = (): JudgedGateway => nothing;
    await auditPass(gatewayPages(fetch), judgeAll, {
      yieldEvery: 50,
      pause: () => {
        pauses++;
        return Promise.resolve();
      },
    });
    expect(pauses).toBe(3); // after 50 and 100 Gateways, and after the page
  });
});

describe('gatewayPageFetcher against the fake API server', () => {
  it('lists every Gateway in pages of the given size, across or within namespaces', async () => {
    const fake = await FakeApiServer.start();
    try {
      for (let i = 0; i < 25; i++)
        fake.put('gateways', gateway(i % 2 ? 'odd' : 'even', `gw-${String(i).padStart(2, '0')}`, {}));
      const kc = new KubeConfig();
      kc.loadFromFile(fake.kubeconfigPath);
      const names = async (namespace?: string): Promise<string[]> => {
        const out: string[] = [];
        const fetch = gatewayPageFetcher(kubeClient(kc), { namespace, pageSize: 10, timeoutMs: 5000 });
        for await (const page of gatewayPages(fetch)) {
          expect(page.items.length).toBeLessThanOrEqual(10);
          for (const item of page.items) out.push((item as { metadata: { name: string } }).metadata.name);
        }
        return out;
      };
      expect(await names()).toHaveLength(25);
      const lists = fake.requests.filter((r) => r.path === '/apis/gateway.networking.k8s.io/v1/gateways');
      expect(lists.map((r) => r.query['limit'])).toEqual(['10', '10', '10']);
      expect(lists[0]!.query['continue']).toBeUndefined();
      expect(lists[1]!.query['continue']).toBeTruthy();
      expect(await names('odd')).toHaveLength(12);

      expect(fake.requests.at(-1)!.path).toBe('/apis/gateway.networking.k8s.io/v1/namespaces/odd/gateways');
      // A page is decoded one Gateway at a time: when the k-th is judged, no later one exists yet.
      let decoded = 0;
      const parse = JSON.parse;
      const spy = vi
        .spyOn(JSON, 'parse')
        .mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
          const value = parse(text, reviver) as { metadata?: { name?: unknown }; items?: unknown };
          if (Array.isArray(value?.items)) decoded += value.items.length;
          else if (typeof value?.metadata?.name === 'string') decoded++;
          return value;
        });
      const ahead: number[] = [];
      let judged = 0;
      try {
        const fetch = gatewayPageFetcher(kubeClient(kc), { pageSize: 10, timeoutMs: 5000 });
        await auditPass(gatewayPages(fetch), () => {
          judged++;
          ahead.push(decoded - judged);
          return nothing;
        });
      } finally {
        spy.mockRestore();
      }
      expect(judged).toBe(25);
      expect(Math.max(...ahead)).toBe(0);
    } finally {
      await fake.close();
    }
  });
});

describe('gatewayPageFetcher on a list with an item that is not JSON', () => {
  it('fails the pass with the words of an answer that is not JSON at all', async () => {
    let body = '';
    const server = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(body);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [
          {
            name: 'c',
            server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
            skipTLSVerify: true,
          },
        ],
        users: [{ name: 'u' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      const fetch = gatewayPageFetcher(kubeClient(kc), { pageSize: 10, timeoutMs: 5000 });
      const failure = (): Promise<string> =>
        auditPass(gatewayPages(fetch), () => nothing).then(
          () => 'passed',
          (err: Error) => err.message,
        );
      body = '{"kind":"GatewayList","metadata":{},"items":[{"metadata":{"name":"a"}},{bad}]}';
      const item = await failure();
      body = '{"kind":"GatewayList","metadata":{},"items":[{"metadata":{"name":"a"}},';
      const whole = await failure();
      expect(whole).toBe(
        'listing Gateways (gateway.networking.k8s.io/v1): list Gateways: the answer is not JSON',
      );
      expect(item).toBe(whole);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });
});

describe('auditPass over objects that carry their own findings', () => {
  /** An object the judge below reads its findings from; metadata as given. */
  const object = (metadata: Record<string, string>, findings: AuditFinding[] = []) => ({
    metadata,
    findings,
  });
  /** Judges an object as its metadata names it, with the findings it carries. */
  const judgeOwn = (o: unknown): JudgedGateway => {
    const { metadata, findings } = o as { metadata: Record<string, string>; findings: AuditFinding[] };
    return { namespace: metadata['namespace'], name: metadata['name'], uid: metadata['uid'], findings };
  };
  const once = (items: unknown[]) =>
    (async function* () {
      yield { items, page: 1, restarted: false };
    })();

  it('tallies each code per scope and severity, sorted by code, then scope, then severity', async () => {
    const result = await auditPass(
      once([
        object({ namespace: 'a', name: 'one' }, [
          finding({ code: 'B', check: 'status', severity: 'warning' }),
          finding({ code: 'B', check: 'spec', severity: 'warning' }),
          finding({ code: 'B', check: 'spec', severity: 'violation' }),
          finding({ code: 'A', check: 'status', severity: 'violation' }),
        ]),
        object({ namespace: 'a', name: 'two' }, [
          finding({ code: 'B', check: 'spec', severity: 'violation' }),
        ]),
      ]),
      judgeOwn,
    );
    expect(result.byCode).toEqual([
      { code: 'A', check: 'status', severity: 'violation', count: 1 },
      { code: 'B', check: 'spec', severity: 'violation', count: 2 },
      { code: 'B', check: 'spec', severity: 'warning', count: 1 },
      { code: 'B', check: 'status', severity: 'warning', count: 1 },
    ]);
    expect([result.violations, result.warnings]).toEqual([3, 2]);
  });

  it('keeps the uid of a flagged Gateway when it has one; a missing namespace or name reads as empty', async () => {
    const bad = [finding({ code: 'A', check: 'spec', severity: 'violation' })];
    const result = await auditPass(
      once([
        object({ namespace: 'a', name: 'with-uid', uid: 'u-1' }, bad),
        object({ namespace: 'a', name: 'without' }, bad),
        object({ name: 'no-namespace' }, bad),
        object({ namespace: 'b' }),
      ]),
      judgeOwn,
    );
    expect(result.flagged).toStrictEqual([
      { namespace: 'a', name: 'with-uid', uid: 'u-1', findings: bad },
      { namespace: 'a', name: 'without', findings: bad },
      { namespace: '', name: 'no-namespace', findings: bad },
    ]);
    expect(result.audited).toEqual(['a/with-uid', 'a/without', '/no-namespace', 'b/']);
    expect(result.namespaces).toBe(3);
  });

  it('keeps the identity the judge read: the object is not read again', async () => {
    const bad = [finding({ code: 'A', check: 'spec', severity: 'violation' })];
    // The judge's reading differs from the object's metadata: the pass must report the judge's.
    const judgeAs = (): JudgedGateway => ({
      namespace: 'judged',
      name: 'as-read',
      uid: 'u-2',
      findings: bad,
    });
    const result = await auditPass(
      once([object({ namespace: 'other', name: 'metadata', uid: 'u-9' })]),
      judgeAs,
    );
    expect(result.flagged).toStrictEqual([
      { namespace: 'judged', name: 'as-read', uid: 'u-2', findings: bad },
    ]);
    expect(result.audited).toEqual(['judged/as-read']);
  });

  it('yields every 50 Gateways by default, at the 50th and the 100th, and after the page', async () => {
    let pauses = 0;
    const pause = () => {
      pauses++;
      return Promise.resolve();
    };
    await auditPass(
      once(Array.from({ length: 100 }, (_, i) => object({ namespace: 'n', name: `g${i}` }))),
      judgeOwn,
      {
        pause,
      },
    );
    expect(pauses).toBe(3);
  });

  it('by default yields with setImmediate: other work runs during a pass', async () => {
    let ranDuring = false;
    let judged = 0;
    setImmediate(() => {
      ranDuring = judged < 100;
    });
    await auditPass(
      once(Array.from({ length: 100 }, (_, i) => object({ namespace: 'n', name: `g${i}` }))),
      () => {
        judged++;
        return nothing;
      },
    );
    expect(ranDuring).toBe(true);
  });
});
