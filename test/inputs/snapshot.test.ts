import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readClusterSnapshot } from '../../src/inputs/snapshot.js';
import { FakeApiServer, ipAddress, serviceCidr } from '../kit/fake-apiserver.js';

let fake: FakeApiServer;

beforeEach(async () => {
  fake = await FakeApiServer.start();
  fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
  fake.put('servicecidrs', serviceCidr('old', ['10.200.0.0/16'], { terminating: 'condition' }));
  fake.put(
    'ipaddresses',
    ipAddress('10.96.0.10', { resource: 'services', namespace: 'kube-system', name: 'kube-dns' }),
  );
});

afterEach(async () => {
  await fake.close();
});

describe('readClusterSnapshot (check --from-cluster)', () => {
  it('lists ServiceCIDRs once, probes IPAddresses with one GET, and looks addresses up one at a time', async () => {
    const snap = await readClusterSnapshot({ kubeconfig: fake.kubeconfigPath });
    expect(snap.ranges.key()).toBe('10.96.0.0/16,10.200.0.0/16(terminating)'); // sorted by object name;
    const answers = await snap.allocatedIPs!.lookup(['10.96.0.10', '10.96.0.11']);
    expect(answers.holderOf('10.96.0.10')).toEqual({
      group: '',
      resource: 'services',
      namespace: 'kube-system',
      name: 'kube-dns',
    });
    expect(answers.holderOf('10.96.0.11')).toBeUndefined();
    expect(answers.uncheckedReason?.('10.96.0.11')).toBeUndefined();
    await snap.allocatedIPs!.close();
    expect(snap.source).toBe(`ServiceCIDR objects (networking.k8s.io/v1) from ${fake.url}`);
    expect(fake.requests.every((r) => r.query['watch'] === undefined)).toBe(true);
    expect(fake.requests.map((r) => r.path).sort()).toEqual([
      '/apis/networking.k8s.io/v1/ipaddresses/0.0.0.0',
      '/apis/networking.k8s.io/v1/ipaddresses/10.96.0.10',
      '/apis/networking.k8s.io/v1/ipaddresses/10.96.0.11',
      '/apis/networking.k8s.io/v1/servicecidrs',
    ]);
  });

  it('a probe refused by the API server fails the snapshot, naming the reason', async () => {
    fake.failGets('ipaddresses', 1, 403);
    await expect(readClusterSnapshot({ kubeconfig: fake.kubeconfigPath })).rejects.toThrow(
      /reading IPAddresses \(networking.k8s.io\/v1\) failed at http:\/\/127.0.0.1:\d+: HTTP 403/,
    );
  });

  it('falls back to v1beta1, and leaves allocatedIPs out when the IPAddress API is absent', async () => {
    fake.serveVersions('servicecidrs', ['v1beta1']);
    fake.serveVersions('ipaddresses', []);
    const snap = await readClusterSnapshot({ kubeconfig: fake.kubeconfigPath });
    expect(snap.source).toContain('networking.k8s.io/v1beta1');
    expect(snap.allocatedIPs).toBeUndefined();
  });

  it('says which flag to use when no ServiceCIDR API is served', async () => {
    fake.serveVersions('servicecidrs', []);
    await expect(readClusterSnapshot({ kubeconfig: fake.kubeconfigPath })).rejects.toThrow(
      /serves no ServiceCIDR API .*use --service-cidr instead/,
    );
  });

  it('reports a failing list with its status', async () => {
    fake.failLists('servicecidrs', 1, 403);
    await expect(readClusterSnapshot({ kubeconfig: fake.kubeconfigPath })).rejects.toThrow(
      /listing ServiceCIDRs \(networking.k8s.io\/v1\) failed at http:\/\/127.0.0.1:\d+: HTTP 403/,
    );
  });

  it('fails clearly when the cluster cannot be reached', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const path = join(fake.dir, 'unreachable');
    const text = (await import('node:fs/promises')).readFile(fake.kubeconfigPath, 'utf8');
    await writeFile(path, (await text).replace(fake.url, `http://127.0.0.1:${port}`));
    await expect(readClusterSnapshot({ kubeconfig: path })).rejects.toThrow(
      new RegExp(`^cannot reach the Kubernetes API at http://127.0.0.1:${port} .*ECONNREFUSED`),
    );
  });

  it('fails clearly without any credentials', async () => {
    await expect(
      readClusterSnapshot({ env: {}, home: '/nonexistent-home', serviceAccountTokenFile: '/nonexistent' }),
    ).rejects.toThrow(/no Kubernetes credentials found/);
  });
});
