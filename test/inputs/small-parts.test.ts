/**
 * The small parts of src/inputs that the watch and lookup tests pass
 * through without looking: the /readyz components, the ranges fixed at
 * start-up (--service-cidr, --dev without a cluster), and the metrics, which
 * each registry holds once however often they are asked for.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { allocatedIPsComponent, serviceRangesComponent } from '../../src/inputs/health.js';
import { FLAG_SOURCE, flagSources } from '../../src/inputs/ranges/flag-source.js';
import { devDefaultSources, staticRangeSource } from '../../src/inputs/ranges/static-source.js';
import { revisionMetrics } from '../../src/inputs/revision/crd-revision-metrics.js';
import { decideRevision } from '../../src/inputs/revision/crd-revision-decision.js';
import { allocationPrefetch } from '../../src/inputs/allocations/allocation-prefetch.js';
import { startAllocationLookup } from '../../src/inputs/allocations/ip-addresses.js';
import { DEFAULT_LOOKUP_OPTIONS } from '../../src/inputs/allocations/ip-lookup.js';
import type { KubeClient, KubeRequest } from '../../src/kube/client.js';
import { context as baseContext } from '../kit/gateways.js';
import { allocationLookupMetrics } from '../../src/inputs/allocations/ip-lookup-metrics.js';
import { clusterMetrics } from '../../src/inputs/ranges/metrics.js';
import { ServiceRanges } from '../../src/rules/index.js';
import type { ClusterSources } from '../../src/inputs/ranges/types.js';
import { capturingLogger } from '../kit/helpers.js';

function ranges(...cidrs: string[]): ServiceRanges {
  const parsed = ServiceRanges.parse(cidrs);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.ranges;
}

describe('the /readyz components of the cluster inputs', () => {
  it('service ranges: named service-ranges, ready as the source says, described under serviceRanges', () => {
    let ready = false;
    const source = {
      ...staticRangeSource(ranges('10.96.0.0/12'), 'test'),
      readiness: () => (ready ? { ready: true } : { ready: false, reason: 'no list yet' }),
    };
    const component = serviceRangesComponent(source);
    expect(component.name).toBe('service-ranges');
    expect(component.check?.()).toEqual({ ok: false, reason: 'no list yet' });
    ready = true;
    expect(component.check?.()).toEqual({ ok: true, reason: undefined });
    expect(component.detail?.key).toBe('serviceRanges');
    expect(component.detail?.describe()).toEqual({ source: 'test', ranges: ['10.96.0.0/12'] });
  });

  it('allocated IPs: never holds readiness back; described under allocatedIPs, or off', () => {
    const off = allocatedIPsComponent(undefined);
    expect(off).toEqual({
      name: 'allocated-ips',
      detail: { key: 'allocatedIPs', describe: expect.any(Function) },
    });
    expect(off.check).toBeUndefined();
    expect(off.detail?.describe()).toBe('off');
    const lookups = { describe: () => ({ state: 'watching' }) } as unknown as ClusterSources['allocatedIPs'];
    expect(allocatedIPsComponent(lookups).detail?.describe()).toEqual({ state: 'watching' });
  });
});

describe('ranges fixed at start-up', () => {
  it('--service-cidr: the ranges as metrics (not terminating), one log line, described as the flag', async () => {
    const registry = new Registry();
    const { logger, lines } = capturingLogger();
    const sources = flagSources(ranges('10.96.0.0/16', 'fd00::/108'), logger, registry);
    expect(sources.allocatedIPs).toBeUndefined();
    expect(sources.ranges.readiness()).toEqual({ ready: true });
    expect(sources.ranges.current()?.all.map((r) => r.cidr)).toEqual(['10.96.0.0/16', 'fd00::/108']);
    expect(sources.ranges.describe()).toEqual({
      source: FLAG_SOURCE,
      ranges: ['10.96.0.0/16', 'fd00::/108'],
    });
    const gauge = await registry.getSingleMetric('routability_webhook_service_ranges')!.get();
    expect(gauge.values.map((v) => [v.labels, v.value])).toEqual([
      [{ cidr: '10.96.0.0/16', terminating: 'false' }, 1],
      [{ cidr: 'fd00::/108', terminating: 'false' }, 1],
    ]);
    expect(lines).toMatchObject([
      {
        level: 30,
        source: 'flag',
        ranges: ranges('10.96.0.0/16', 'fd00::/108').key(),
        msg: 'service ranges from --service-cidr; no ServiceCIDR watch',
      },
    ]);
    expect(lines).toHaveLength(1);
    await sources.close();
  });

  it('--dev without a cluster: kubeadm’s default range, saying why there is no cluster', () => {
    const sources = devDefaultSources('no kubeconfig');
    expect(sources.ranges.describe()).toEqual({
      source: '--dev default 10.96.0.0/12 (no kubeconfig)',
      ranges: ['10.96.0.0/12'],
    });
    expect(sources.allocatedIPs).toBeUndefined();
  });
});

describe('cluster metrics, once per registry', () => {
  /** Every metric's name and type in the registry, sorted. */
  const names = async (registry: Registry) =>
    (await registry.getMetricsAsJSON()).map((m) => `${m.name} ${m.type}`).sort();

  const sets = [
    {
      what: 'the watch metrics',
      metric: (registry: Registry): unknown => clusterMetrics(registry).lastSync,
      names: [
        'routability_webhook_kube_bad_answers_total counter',
        'routability_webhook_service_ranges gauge',
        'routability_webhook_watch_last_sync_timestamp_seconds gauge',
        'routability_webhook_watch_restarts_total counter',
      ],
    },
    {
      what: 'the allocated-IP lookup metrics',
      metric: (registry: Registry): unknown => allocationLookupMetrics(registry).duration,
      names: [
        'routability_webhook_allocated_ip_cache_hits_total counter',
        'routability_webhook_allocated_ip_lookup_duration_seconds histogram',
        'routability_webhook_allocated_ip_lookup_up gauge',
        'routability_webhook_allocated_ip_lookups_total counter',
        'routability_webhook_allocated_ip_unchecked_reviews_total counter',
      ],
    },
  ];
  for (const { what, metric, names: expected } of sets)
    it(`${what} are registered once per registry: asked for again, the same objects`, async () => {
      const registry = new Registry();
      expect(metric(registry)).toBe(metric(registry));
      expect(await names(registry)).toEqual(expected);
    });

  it('the revision gauges start at 0 (no revision known, the field not missing), and are reused', async () => {
    const registry = new Registry();
    revisionMetrics(registry);
    const again = revisionMetrics(registry);
    const text = await registry.metrics();
    expect(text).toContain('routability_webhook_gateway_crd_routability_missing 0\n');
    expect(text).not.toMatch(/routability_webhook_gep_revision\{[^}]*\} 1/);
    again.setFieldMissing(true);
    expect(await registry.metrics()).toContain('routability_webhook_gateway_crd_routability_missing 1\n');
  });

  it('the allocated-IP lookup duration has buckets from 2 ms to 2.5 s', async () => {
    const first = allocationLookupMetrics(new Registry());
    first.duration.observe(0.003);
    const buckets = (await first.duration.get()).values
      .filter((v) => v.metricName?.endsWith('_bucket'))
      .map((v) => v.labels['le']);
    expect(buckets).toEqual([0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, '+Inf']);
  });
});

describe('the revision decision and the allocation prefetch, at their edges', () => {
  it('a CRD without metadata, or with a generation that is not a number, is undecidable and shows no generation', () => {
    for (const crd of [{}, { metadata: { generation: '3' } }]) {
      const decision = decideRevision(crd);
      expect(decision.state).toBe('undecidable');
      expect(decision.revision).toBeUndefined();
      expect(decision).not.toHaveProperty('generation');
    }
  });

  it('a decision that asks about no address is answered at once, without a lookup', () => {
    let lookups = 0;
    const prefetch = allocationPrefetch({
      lookup: () => {
        lookups++;
        return Promise.resolve({ holderOf: () => undefined });
      },
      describe: () => ({}),
      close: () => Promise.resolve(),
    });
    const ctx = baseContext({ ranges: ranges('10.96.0.0/12') });
    expect(prefetch.decide(ctx, () => 'answer')).toBe('answer');
    expect(lookups).toBe(0);
  });
});

describe('the allocated-IP lookups against the cluster', () => {
  /** A client that answers every GET "not found" and keeps the requests. */
  function notFoundClient(requests: KubeRequest[]): KubeClient {
    return {
      send: (request) => {
        requests.push(request);
        return Promise.resolve({
          status: 404,
          text: '{"kind":"Status","reason":"NotFound"}',
          retryAfter: undefined,
        });
      },
      close: () => {},
    } as Partial<KubeClient> as KubeClient;
  }

  // The lookup's own deadline ends a GET; the client's, a second later, is a
  // backstop for a call whose signal never fires. Without options the
  // default deadline counts.
  it.each([
    { options: undefined, backstopMs: DEFAULT_LOOKUP_OPTIONS.timeoutMs + 1_000 },
    { options: { timeoutMs: 250 }, backstopMs: 1_250 },
  ])(
    'the client’s backstop is the lookup deadline plus 1 s (options $options)',
    async ({ options, backstopMs }) => {
      const requests: KubeRequest[] = [];
      const { logger } = capturingLogger();
      const lookup = startAllocationLookup({ client: notFoundClient(requests), logger, options });
      try {
        await lookup.probe();
        expect(requests.length).toBeGreaterThan(0);
        for (const r of requests) expect(r.timeoutMs).toBe(backstopMs);
      } finally {
        await lookup.close();
      }
    },
  );
});
