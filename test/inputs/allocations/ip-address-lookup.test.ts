/**
 * Allocated ClusterIPs looked up on demand against the fake API server over
 * real HTTP: one GET per address the rules ask about, a bounded cache, and a
 * stated behaviour when the API server does not answer.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { post, testApp } from '../../kit/app.js';
import { defaultGateway, gatewayReview } from '../../kit/reviews.js';
import { FakeApiServer, ipAddress, serviceCidr } from '../../kit/fake-apiserver.js';
import { decideWithAllocations, eventually, startSources, type Harness } from '../../kit/helpers.js';

let fake: FakeApiServer;
const harnesses: Harness[] = [];

// Fast failure for the tests; the cache never expires within a test unless a test says so.
const TEST_LOOKUP = { timeoutMs: 300, probeIntervalMs: 50, cacheTtlMs: 60_000 };

async function start(args: readonly string[] = [], lookup = {}): Promise<Harness> {
  const h = await startSources(['--kubeconfig', fake.kubeconfigPath, ...args], {
    lookup: { ...TEST_LOOKUP, ...lookup },
  });
  harnesses.push(h);
  await eventually(() => h.sources.ranges.readiness().ready, 'ranges ready');
  // The ServiceCIDR watch opens its stream after the list: wait for it, so the lookups are the last requests.
  if (!args.includes('--service-cidr'))
    await eventually(
      () => fake.requests.some((r) => r.path.endsWith('/servicecidrs') && r.query['watch'] === 'true'),
      'the ServiceCIDR watch open',
    );
  return h;
}

const lookups = () => fake.getCount('ipaddresses');
const lists = () => fake.listCount('ipaddresses');
const detail = (h: Harness) =>
  (h.sources.ranges.describe() as { allocatedIPs: Record<string, unknown> }).allocatedIPs;

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

describe('allocated-IP lookups', () => {
  it('denies a Cluster address held by another object, naming the holder, with one GET of that address', async () => {
    const h = await start();
    await eventually(() => detail(h)['state'] === 'ok', 'the start-up probe');
    const before = lookups();
    const denied = await decideWithAllocations(h, '10.96.0.10');
    expect(denied.allowed).toBe(false);
    expect(denied.message).toBe(
      'spec.addresses[0].value: Invalid value: "10.96.0.10": already allocated to services/kube-system/kube-dns',
    );
    expect(lookups() - before).toBe(1);
    expect(fake.requests.at(-1)!.path).toBe('/apis/networking.k8s.io/v1/ipaddresses/10.96.0.10');
    // IPv6: looked up by the canonical spelling, whatever the request wrote.
    expect((await decideWithAllocations(h, 'fd00:10:96:0::A')).allowed).toBe(false);
    expect(decodeURIComponent(fake.requests.at(-1)!.path)).toBe(
      '/apis/networking.k8s.io/v1/ipaddresses/fd00:10:96::a',
    );
    // Never a list, never a watch.
    expect(lists()).toBe(0);
    expect(fake.watchesOpened.get('ipaddresses')).toBeUndefined();
  });

  it('allows a free address (the API answers 404 naming it) and the one this Gateway holds', async () => {
    const h = await start();
    const free = await decideWithAllocations(h, '10.96.0.11');
    expect(free.allowed).toBe(true);
    expect(free.warnings).toEqual([]);
    expect(
      (await decideWithAllocations(h, '10.96.0.50', 'Cluster', { namespace: 'default', name: 'gw' })).allowed,
    ).toBe(true);
    const other = await decideWithAllocations(h, '10.96.0.50', 'Cluster', {
      namespace: 'default',
      name: 'other',
    });
    expect(other.allowed).toBe(false);
    expect(other.message).toContain('already allocated to gateways.gateway.networking.k8s.io/default/gw');
  });

  it('asks nothing for requests whose rules need no allocation', async () => {
    const h = await start();
    await eventually(() => detail(h)['state'] === 'ok', 'the start-up probe');
    const before = lookups();
    // Outside the range (denied by another rule), External, and the network address: no GET.
    expect((await decideWithAllocations(h, '192.0.2.1')).allowed).toBe(false);
    expect((await decideWithAllocations(h, '192.0.2.1', 'External')).allowed).toBe(true);
    expect((await decideWithAllocations(h, '10.96.0.0')).allowed).toBe(false);
    expect(lookups()).toBe(before);
  });

  it('answers a repeated question from the cache', async () => {
    const h = await start();
    await eventually(() => detail(h)['state'] === 'ok', 'the start-up probe');
    const before = lookups();
    await decideWithAllocations(h, '10.96.0.10');
    await decideWithAllocations(h, '10.96.0.10');
    expect(lookups() - before).toBe(1);
    expect(await h.registry.metrics()).toContain('routability_webhook_allocated_ip_cache_hits_total 1');
  });

  it('keeps at most cacheMax answers, whatever the number of addresses asked about', async () => {
    const h = await start([], { cacheMax: 5 });
    for (let i = 1; i <= 20; i++) await decideWithAllocations(h, `10.96.1.${i}`);
    expect(detail(h)['cache']).toEqual({ entries: 5, max: 5, ttlSeconds: 60 });
    // The most recent ones are kept: asking again costs no GET; an evicted one does.
    const before = lookups();
    await decideWithAllocations(h, '10.96.1.20');
    expect(lookups()).toBe(before);
    await decideWithAllocations(h, '10.96.1.1');
    expect(lookups()).toBe(before + 1);
  });

  it('100,000 IPAddress objects on the server change nothing: no list, one GET per address asked', async () => {
    const many = Array.from({ length: 100_000 }, (_, i) => ({
      metadata: { name: `10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}` },
      spec: { parentRef: { group: '', resource: 'services', namespace: 'apps', name: `svc-${i}` } },
    }));
    fake.setSilently('ipaddresses', many);
    const h = await start();
    await eventually(() => detail(h)['state'] === 'ok', 'the start-up probe');
    const before = lookups();
    const denied = await decideWithAllocations(h, '10.96.3.7');
    expect(denied.message).toContain(`already allocated to services/apps/svc-${3 * 256 + 7}`);
    expect(lookups() - before).toBe(1);
    expect(lists()).toBe(0);
    expect(fake.watchesOpened.get('ipaddresses')).toBeUndefined();
    // What the process keeps is the cache: one answer, not 100,000 objects.
    expect(detail(h)['cache']).toMatchObject({ entries: 1 });
  });

  it('API server not answering: allowed with a warning naming the reason, shown in /readyz detail and metrics, then recovers', async () => {
    const h = await start();
    await eventually(() => detail(h)['state'] === 'ok', 'the start-up probe');
    const release = fake.holdGets('ipaddresses');
    const unchecked = await decideWithAllocations(h, '10.96.0.10');
    expect(unchecked.allowed).toBe(true);
    expect(unchecked.warnings).toEqual([
      'spec.addresses[0].value: allocation of "10.96.0.10" not checked (no answer from the API server within 0.3 s)',
    ]);
    expect(unchecked.notices.map((f) => f.code)).toEqual(['ClusterAddressAllocationUnchecked']);
    expect(detail(h)).toMatchObject({
      state: 'unavailable',
      effect: 'Cluster addresses allowed unchecked, with a warning',
      lastError: { reason: 'no answer from the API server within 0.3 s' },
    });
    const metrics = await h.registry.metrics();
    expect(metrics).toContain('routability_webhook_allocated_ip_lookup_up 0');
    expect(metrics).toMatch(
      /routability_webhook_allocated_ip_lookups_total\{kind="lookup",result="error"\} 1/,
    );
    // A failed answer is not cached: once the API server answers, the probe clears the state
    // and the same address is denied.
    release();
    await eventually(() => detail(h)['state'] === 'ok', 'the background probe to see the API answer');
    expect(await h.registry.metrics()).toContain('routability_webhook_allocated_ip_lookup_up 1');
    expect((await decideWithAllocations(h, '10.96.0.10')).allowed).toBe(false);
    expect(h.lines.some((l) => l.msg.startsWith('allocated-IP lookups fail'))).toBe(true);
    expect(h.lines.some((l) => l.msg === 'allocated-IP lookups answer again')).toBe(true);
  });

  it('429 with Retry-After: the probe waits at least that long (its own wait is 50 ms)', async () => {
    const h = await start();
    await eventually(() => detail(h)['state'] === 'ok', 'the start-up probe');
    fake.faults.add({ resource: 'ipaddresses' }, { kind: 'status', code: 429, retryAfterSeconds: 1 });
    const result = await decideWithAllocations(h, '10.96.0.10');
    expect(result.warnings[0]).toContain('not checked (HTTP 429 from the API server)');
    await eventually(() => fake.getCount('ipaddresses') >= 4, 'three probes after the lookup', 10_000);
    const gets = fake.requests.filter((r) => r.resource === 'ipaddresses' && r.verb === 'get').slice(-3);
    // Probes 1 s apart at least, not the 50 ms (±20 %) of the probe interval.
    for (let i = 1; i < gets.length; i++) expect(gets[i]!.at - gets[i - 1]!.at).toBeGreaterThanOrEqual(950);
    fake.faults.clearAll();
    await eventually(() => detail(h)['state'] === 'ok', 'lookups answer again', 5_000);
  });

  it('HTTP 403 (no RBAC for get): allowed with a warning saying so', async () => {
    const h = await start();
    await eventually(() => detail(h)['state'] === 'ok', 'the start-up probe');
    fake.failGets('ipaddresses', 1, 403);
    const result = await decideWithAllocations(h, '10.96.0.10');
    expect(result.allowed).toBe(true);
    expect(result.warnings[0]).toContain('not checked (HTTP 403 (forbidden: needs get on ipaddresses))');
  });

  it('API server unreachable: the start-up probe says so before any review needs it', async () => {
    const h = await start();
    await eventually(() => detail(h)['state'] === 'ok', 'the start-up probe');
    await fake.close();
    const result = await decideWithAllocations(h, '10.96.0.12');
    expect(result.allowed).toBe(true);
    expect(result.warnings[0]).toMatch(/not checked \(API server unreachable \(ECONNREFUSED\)\)/);
    fake = await FakeApiServer.start(); // for afterEach
  });

  it('bounds the lookups in flight and the queue: beyond it a lookup fails at once', async () => {
    const h = await start([], { concurrency: 1, queueMax: 1, timeoutMs: 2_000 });
    await eventually(() => detail(h)['state'] === 'ok', 'the start-up probe');
    const release = fake.holdGets('ipaddresses');
    const pending = [
      decideWithAllocations(h, '10.96.2.1'),
      decideWithAllocations(h, '10.96.2.2'),
      decideWithAllocations(h, '10.96.2.3'),
    ];
    const third = await pending[2]!;
    expect(third.warnings[0]).toContain('not checked (too many allocated-IP lookups waiting)');
    expect(detail(h)).toMatchObject({ inFlight: 1, queued: 1 });
    release();
    const [first, second] = await Promise.all(pending.slice(0, 2));
    expect(first!.warnings).toEqual([]);
    expect(second!.warnings).toEqual([]);
  });

  it('skips the rule, and says so once, when the IPAddress API is absent', async () => {
    fake.serveVersions('ipaddresses', []);
    const h = await start();
    await eventually(() => detail(h)['state'] === 'absent', 'the IPAddress API found absent');
    const result = await decideWithAllocations(h, '10.96.0.10');
    expect(result.allowed).toBe(true);
    expect(result.warnings).toEqual([]);
    const said = h.lines.filter((l) => String(l.msg).includes('no IPAddress API'));
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('ClusterAddressAllocated rule is skipped');
  });

  it('--no-check-allocated-ips: no lookups, rule off', async () => {
    const h = await start(['--no-check-allocated-ips']);
    expect(h.sources.allocatedIPs).toBeUndefined();
    expect((await decideWithAllocations(h, '10.96.0.10')).allowed).toBe(true);
    expect(fake.requests.some((r) => r.path.includes('ipaddresses'))).toBe(false);
  });

  it('--service-cidr with an explicit --check-allocated-ips still looks IPAddresses up', async () => {
    const h = await start(['--service-cidr', '10.96.0.0/16', '--check-allocated-ips']);
    expect(fake.requests.some((r) => r.path.includes('servicecidrs'))).toBe(false);
    expect((await decideWithAllocations(h, '10.96.0.10')).allowed).toBe(false);
  });

  describe('through the served app', () => {
    const review = (uid: string, value: string) =>
      gatewayReview({ uid, object: defaultGateway([{ type: 'IPAddress', value, routability: 'Cluster' }]) });

    it('denies an allocated IP naming the holder, allows a free one, and allows unchecked with a warning while the API server is silent', async () => {
      const h = await start();
      const { app } = testApp({ sources: h.sources });
      try {
        const denied = (await post(app, '/validate', review('u1', '10.96.0.10'))).json();
        expect(denied['response']).toMatchObject({
          uid: 'u1',
          allowed: false,
          status: {
            code: 403,
            message:
              'spec.addresses[0].value: Invalid value: "10.96.0.10": already allocated to services/kube-system/kube-dns',
          },
        });
        const free = (await post(app, '/validate', review('u2', '10.96.0.11'))).json();
        expect(free['response']).toMatchObject({ uid: 'u2', allowed: true });
        expect(free['response'].warnings).toBeUndefined();

        const release = fake.holdGets('ipaddresses');
        const unchecked = (await post(app, '/validate', review('u3', '10.96.0.12'))).json();
        release();
        expect(unchecked['response']).toMatchObject({
          uid: 'u3',
          allowed: true,
          warnings: [
            'spec.addresses[0].value: allocation of "10.96.0.12" not checked (no answer from the API server within 0.3 s)',
          ],
        });
      } finally {
        await app.close();
      }
    });
  });
});
