import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeApiServer, ipAddress, serviceCidr } from './fake-apiserver.js';
import { decide, eventually, startSources, type Harness } from './helpers.js';

let fake: FakeApiServer;
const harnesses: Harness[] = [];

async function start(args: readonly string[] = []): Promise<Harness> {
  const h = await startSources(['--kubeconfig', fake.kubeconfigPath, ...args]);
  harnesses.push(h);
  await eventually(() => h.sources.ranges.readiness().ready, 'ranges ready');
  return h;
}

beforeEach(async () => {
  fake = await FakeApiServer.start();
  fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16', 'fd00:10:96::/112']));
  fake.put(
    'ipaddresses',
    ipAddress('10.96.0.10', { resource: 'services', namespace: 'kube-system', name: 'kube-dns' }),
  );
  fake.put(
    'ipaddresses',
    ipAddress('10.96.0.50', {
      group: 'gateway.networking.k8s.io',
      resource: 'gateways',
      namespace: 'default',
      name: 'gw',
    }),
  );
  fake.put(
    'ipaddresses',
    ipAddress('fd00:10:96::a', { resource: 'services', namespace: 'default', name: 'v6' }),
  );
});

afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.sources.close();
  await fake.close();
});

describe('IPAddress watch (allocated ClusterIPs)', () => {
  it('denies a Cluster address held by another object, naming the holder', async () => {
    const h = await start();
    await eventually(() => h.sources.allocatedIPs!.ready(), 'IPAddress list');
    expect(h.sources.allocatedIPs!.holderOf('10.96.0.10')).toEqual({
      group: '',
      resource: 'services',
      namespace: 'kube-system',
      name: 'kube-dns',
    });
    const denied = decide(h, '10.96.0.10');
    expect(denied.allowed).toBe(false);
    expect(denied.message).toBe(
      'spec.addresses[0].value: Invalid value: "10.96.0.10": already allocated to services/kube-system/kube-dns',
    );
    expect(denied.violations.map((v) => v.code)).toEqual(['ClusterAddressAllocated']);
    // IPv6: looked up by the canonical spelling, whatever the request wrote.
    expect(decide(h, 'fd00:10:96:0::A').allowed).toBe(false);
    // A free address is fine.
    expect(decide(h, '10.96.0.11').allowed).toBe(true);
  });

  it('allows the address held by this very Gateway, and not by another Gateway', async () => {
    const h = await start();
    await eventually(() => h.sources.allocatedIPs!.ready(), 'IPAddress list');
    expect(decide(h, '10.96.0.50', 'Cluster', { namespace: 'default', name: 'gw' }).allowed).toBe(true);
    const other = decide(h, '10.96.0.50', 'Cluster', { namespace: 'default', name: 'other' });
    expect(other.allowed).toBe(false);
    expect(other.message).toContain('already allocated to');
    expect(other.message).toContain('default/gw');
  });

  it('follows IPAddress ADDED, MODIFIED and DELETED events', async () => {
    const h = await start();
    await eventually(() => h.sources.allocatedIPs!.ready(), 'IPAddress list');
    await fake.until(() => fake.watcherCount('ipaddresses') === 1, 'an IPAddress watch');
    fake.put(
      'ipaddresses',
      ipAddress('10.96.0.20', { resource: 'services', namespace: 'apps', name: 'web' }),
    );
    await eventually(() => !decide(h, '10.96.0.20').allowed, 'ADDED IPAddress to deny 10.96.0.20');
    fake.put(
      'ipaddresses',
      ipAddress('10.96.0.20', {
        group: 'gateway.networking.k8s.io',
        resource: 'gateways',
        namespace: 'default',
        name: 'gw',
      }),
    );
    await eventually(() => decide(h, '10.96.0.20').allowed, 'MODIFIED IPAddress now held by this Gateway');
    fake.remove('ipaddresses', '10.96.0.10');
    await eventually(() => decide(h, '10.96.0.10').allowed, 'DELETED IPAddress to free 10.96.0.10');
    expect(await h.registry.metrics()).toMatch(
      /routability_webhook_watch_last_sync_timestamp_seconds\{resource="ipaddresses"\} \d+/,
    );
  });

  it('skips the rule, and says so once, when the IPAddress API is absent', async () => {
    fake.serveVersions('ipaddresses', []);
    const h = await start();
    await eventually(() => h.sources.allocatedIPs!.ready(), 'IPAddress API found absent');
    expect(h.sources.allocatedIPs!.holderOf('10.96.0.10')).toBeUndefined();
    expect(decide(h, '10.96.0.10').allowed).toBe(true);
    const said = h.lines.filter((l) => String(l.msg).includes('no IPAddress API'));
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('ClusterAddressAllocated rule is skipped');
    expect(h.sources.ranges.describe()).toMatchObject({ allocatedIPs: { state: 'absent' } });
  });

  it('--no-check-allocated-ips: no IPAddress watch, rule off', async () => {
    const h = await start(['--no-check-allocated-ips']);
    expect(h.sources.allocatedIPs).toBeUndefined();
    expect(decide(h, '10.96.0.10').allowed).toBe(true);
    expect(fake.requests.some((r) => r.path.includes('ipaddresses'))).toBe(false);
  });

  it('--service-cidr with an explicit --check-allocated-ips still watches IPAddresses', async () => {
    const h = await start(['--service-cidr', '10.96.0.0/16', '--check-allocated-ips']);
    expect(fake.requests.some((r) => r.path.includes('servicecidrs'))).toBe(false);
    await eventually(() => h.sources.allocatedIPs?.ready() === true, 'IPAddress list');
    expect(decide(h, '10.96.0.10').allowed).toBe(false);
  });

  it('keeps the last known allocations while the IPAddress watch restarts', async () => {
    const h = await start();
    await eventually(() => h.sources.allocatedIPs!.ready(), 'IPAddress list');
    await fake.until(() => fake.watcherCount('ipaddresses') === 1, 'an IPAddress watch');
    fake.failLists('ipaddresses', 1);
    fake.goneOnNextWatch('ipaddresses', 'status');
    fake.endWatches('ipaddresses');
    await fake.until(() => fake.listCount('ipaddresses') === 2, 'the failed relist');
    expect(decide(h, '10.96.0.10').allowed).toBe(false);
    await fake.until(() => fake.listCount('ipaddresses') === 3, 'the restart');
    // The counter goes up before the restarted informer lists.
    expect(await h.registry.metrics()).toContain(
      'routability_webhook_watch_restarts_total{resource="ipaddresses"} 1',
    );
    await eventually(
      () => h.sources.allocatedIPs!.holderOf('10.96.0.10') !== undefined,
      'relisted allocations',
    );
  });
});
