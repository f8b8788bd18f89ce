import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command } from '../../src/cli/audit.js';
import { runCli } from '../crd/run-cli.js';
import { FakeApiServer, gateway, ipAddress, serviceCidr } from '../kit/fake-apiserver.js';

let fake: FakeApiServer;
let home: string;

beforeEach(async () => {
  fake = await FakeApiServer.start();
  home = await mkdtemp(join(tmpdir(), 'audit-home-'));
  fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
  fake.put(
    'ipaddresses',
    ipAddress('10.96.0.10', { resource: 'services', namespace: 'kube-system', name: 'kube-dns' }),
  );
  const cluster = (value: string) => [{ type: 'IPAddress', value, routability: 'Cluster' }];
  fake.put('gateways', gateway('apps', 'inside', { spec: cluster('10.96.0.20') }));
  fake.put('gateways', gateway('apps', 'outside', { spec: cluster('10.200.0.5') }));
  fake.put('gateways', gateway('edge', 'taken', { spec: cluster('10.96.0.10') }));
  fake.put('gateways', gateway('edge', 'plain', {}));
  fake.put(
    'gateways',
    gateway('edge', 'status-only', { status: [{ type: 'IPAddress', value: '10.96.0.77' }] }),
  );
});

afterEach(async () => {
  await fake.close();
  await rm(home, { recursive: true, force: true });
});

/** An isolated environment: no real kubeconfig or home can be reached. */
function env(): Record<string, string> {
  return { HOME: home, KUBECONFIG: fake.kubeconfigPath };
}

describe('routability-webhook audit', () => {
  it('lists every Gateway in pages, names each finding by namespace/name and field, and exits 1', async () => {
    const r = await runCli(command.main, ['--page-size', '2'], { env: env() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    // In list order (namespace/name): apps/outside, edge/status-only, edge/taken.
    expect(lines).toEqual([
      `audit of context "fake" (server ${fake.url}), all namespaces`,
      expect.stringMatching(
        /^Gateway apps\/outside: spec\.addresses\[0\]\.value: .*"10\.200\.0\.5".*10\.96\.0\.0\/16/,
      ),
      expect.stringMatching(
        /^warning: Gateway edge\/status-only: status\.addresses\[0\]\.value: .*"10\.96\.0\.77"/,
      ),
      expect.stringMatching(/^warning: Gateway edge\/status-only: status\.addresses\[0\]: .*defaulted/),
      expect.stringMatching(/^Gateway edge\/taken: spec\.addresses\[0\]\.value: .*kube-system\/kube-dns/),
      'audited 5 Gateways in 2 namespaces: 2 violations, 2 warnings (ClusterAddressAllocated 1, ClusterAddressOutsideServiceRange 1, ExternalAddressInsideServiceRange 1, StatusDefaultedExternal 1)',
    ]);
    const lists = fake.requests.filter((q) => q.path === '/apis/gateway.networking.k8s.io/v1/gateways');
    expect(lists).toHaveLength(3);
    expect(lists.every((q) => q.query['limit'] === '2')).toBe(true);
  });

  it('-n audits one namespace; a clean one exits 0', async () => {
    const r = await runCli(command.main, ['-n', 'apps', '--service-cidr', '10.0.0.0/8'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `audit of context "fake" (server ${fake.url}), namespace apps\n` +
        'audited 2 Gateways in 1 namespace: 0 violations, 0 warnings\n',
    );
    expect(
      fake.requests.some((q) => q.path === '/apis/gateway.networking.k8s.io/v1/namespaces/apps/gateways'),
    ).toBe(true);
  });

  it('--output json carries the settings it ran with and the summary by code', async () => {
    const r = await runCli(command.main, ['-o', 'json'], { env: env() });
    const report = JSON.parse(r.stdout) as {
      settings: { cluster: string; serviceCidrs: string[]; allocatedIPs: boolean };
      summary: { gateways: number; violations: number; byCode: { code: string; count: number }[] };
    };
    expect(report.settings).toMatchObject({
      cluster: fake.url,
      context: 'fake',
      serviceCidrs: ['10.96.0.0/16'],
      allocatedIPs: true,
    });
    expect(report.summary.gateways).toBe(5);
    expect(report.summary.byCode.map((c) => c.code)).toEqual(
      expect.arrayContaining(['ClusterAddressOutsideServiceRange', 'ClusterAddressAllocated']),
    );
  });

  it('--output junit lists the Gateways that passed too, a suite per namespace', async () => {
    const r = await runCli(command.main, ['-o', 'junit'], { env: env() });
    expect(r.code).toBe(1);
    const cases = [...r.stdout.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    expect(cases).toHaveLength(5);
    expect(cases.join('\n')).toContain('apps/inside');
    expect(cases.join('\n')).toContain('edge/plain');
  });

  it('a cluster that refuses the list is exit 2 with the API and server named', async () => {
    fake.failLists('gateways', 1, 403);
    const r = await runCli(command.main, [], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^routability-webhook audit: listing Gateways \(gateway\.networking\.k8s\.io\/v1\): HTTP 403/,
    );
    expect(r.stderr).toContain(fake.url);
  });

  it('no credentials at all is exit 2, and nothing is listed', async () => {
    const r = await runCli(command.main, [], { env: { HOME: home } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no Kubernetes credentials found/);
    // check's flag, which audit does not have, is not named in audit's errors.
    expect(r.stderr).not.toContain('--from-cluster:');
  });

  it('bad flags are usage errors', async () => {
    expect((await runCli(command.main, ['-n', 'Not_A_Namespace'], { env: env() })).stderr).toMatch(
      /--namespace: "Not_A_Namespace" is not a namespace name/,
    );
    expect((await runCli(command.main, ['--page-size', '0'], { env: env() })).code).toBe(2);
  });
});
