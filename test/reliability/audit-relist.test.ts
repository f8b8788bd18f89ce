/**
 * 410 Gone in the middle of a paged Gateway list, through the built CLI: the
 * fake API server compacts its history while `audit` is between pages, so the
 * next page's continue token is too old (410 Expired, what an API server
 * answers after an etcd compaction). `audit` starts the list over once and
 * reports the cluster as it is then — each Gateway once, one added meanwhile
 * included, one deleted meanwhile gone — and a second expiry within the same
 * pass is an error, not a loop. `check --from-cluster` reads no Gateways: its
 * one list (ServiceCIDRs) is not paged, so no continue token can expire.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeApiServer, gateway, ipAddress, serviceCidr, type RequestRecord } from '../kit/fake-apiserver.js';
import { runCli } from '../kit/server-process.js';

const GATEWAYS_PATH = '/apis/gateway.networking.k8s.io/v1/gateways';

let fake: FakeApiServer;

/** A Gateway whose Cluster address lies outside the service range: every Gateway is flagged, so the JSON lists them all. */
const outside = (namespace: string, name: string, n: number) =>
  gateway(namespace, name, { spec: [{ type: 'IPAddress', value: `10.200.0.${n}`, routability: 'Cluster' }] });

const SEVEN = [
  ['apps', 'a1'],
  ['apps', 'a2'],
  ['apps', 'a3'],
  ['edge', 'e1'],
  ['edge', 'e2'],
  ['infra', 'i1'],
  ['infra', 'i2'],
] as const;

beforeEach(async () => {
  fake = await FakeApiServer.start();
  fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
  SEVEN.forEach(([ns, name], i) => fake.put('gateways', outside(ns, name, i + 1)));
});

afterEach(async () => {
  await fake.close();
});

/** The Gateway list requests of the pass, in order. */
const lists = (): RequestRecord[] => fake.requests.filter((r) => r.path === GATEWAYS_PATH);

/**
 * Before the `nth` continued list request is answered (and every later one
 * with `every`): `change()`, then a compaction, so its token is expired.
 */
function expireContinue(nth: number, change: () => void, every = false): void {
  let continued = 0;
  fake.addRoute((_req, _res, url) => {
    if (url.pathname !== GATEWAYS_PATH || !url.searchParams.has('continue')) return false;
    continued++;
    // Past 50 the fake stops expiring tokens, so that a relist storm ends and is counted rather than hanging the test.
    if (continued === nth || (every && continued > nth && continued <= 50)) {
      change();
      fake.compact();
    }
    return false;
  });
}

function audit(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCli(['audit', '--page-size', '2', '-o', 'json'], { env: { KUBECONFIG: fake.kubeconfigPath } });
}

describe('audit: a continue token that expires mid-list (410 Gone)', () => {
  it('restarts the list once and reports each Gateway of the cluster once, as it is after the restart', async () => {
    // Between pages 2 and 3: apps/a0 is added (before the pages already read) and apps/a1 (read on page 1) deleted.
    expireContinue(2, () => {
      fake.put('gateways', outside('apps', 'a0', 100));
      fake.remove('gateways', 'apps/a1');
    });
    const r = await audit();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as {
      summary: { gateways: number; namespaces: number; violations: number };
      gateways: { namespace: string; name: string }[];
    };
    const names = report.gateways.map((g) => `${g.namespace}/${g.name}`);
    expect(names).toEqual(['apps/a0', 'apps/a2', 'apps/a3', 'edge/e1', 'edge/e2', 'infra/i1', 'infra/i2']);
    expect(report.summary).toMatchObject({ gateways: 7, namespaces: 3, violations: 7 });
    // Pages 1-2, the expired page 3, then the whole list again: 4 pages of 2. One 410, one restart.
    const requests = lists();
    expect(requests.map((q) => [q.query['continue'] === undefined ? 'first' : 'next', q.status])).toEqual([
      ['first', 200],
      ['next', 200],
      ['next', 410],
      ['first', 200],
      ['next', 200],
      ['next', 200],
      ['next', 200],
    ]);
  });

  it('a second expiry in the same pass is an error after one restart, not a relist storm', async () => {
    let n = 0;
    // Every continued page expires: any change moves the resourceVersion on (an IPAddress nobody reads).
    expireContinue(
      1,
      () =>
        fake.put(
          'ipaddresses',
          ipAddress(`10.255.0.${++n}`, { resource: 'services', namespace: 'x', name: 'y' }),
        ),
      true,
    );
    const r = await audit();
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/listing Gateways \(gateway\.networking\.k8s\.io\/v1\): .*410/);
    expect(lists().map((q) => [q.query['continue'] === undefined ? 'first' : 'next', q.status])).toEqual([
      ['first', 200],
      ['next', 410],
      ['first', 200],
      ['next', 410],
    ]);
  });
});

describe('check --from-cluster', () => {
  it('lists no Gateways and its ServiceCIDR list is one request without limit or continue: nothing to expire', async () => {
    const r = await runCli(['check', '--from-cluster', '--gep-revision', 'provisional', '-f', '-'], {
      env: { KUBECONFIG: fake.kubeconfigPath },
      input: JSON.stringify({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        ...outside('apps', 'stdin', 1),
      }),
    });
    expect(r.code, r.stderr).toBe(1);
    expect(lists()).toEqual([]);
    const cidrLists = fake.requests.filter((q) => q.resource === 'servicecidrs');
    expect(cidrLists).toHaveLength(1);
    expect(cidrLists[0]!.query).toEqual({});
  });
});
