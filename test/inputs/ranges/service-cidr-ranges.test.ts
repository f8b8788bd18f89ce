/**
 * src/inputs/ranges/service-cidrs.ts in detail: which ServiceCIDR objects count as
 * terminating, how odd objects (raw JSON from the API server) are read, and
 * what the live watch tells the operator — log lines, the skipped-entry
 * warning, /readyz reasons and /readyz?verbose detail. The end-to-end
 * behaviour (events reaching decisions) is in service-cidr-watch.test.ts.
 */
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  listServiceCidrs,
  rangesFromServiceCidrs,
  startServiceCidrWatch,
  type ServiceCIDRObject,
} from '../../../src/inputs/ranges/service-cidrs.js';
import { clusterMetrics } from '../../../src/inputs/ranges/metrics.js';
import type { RangeSource } from '../../../src/inputs/ranges/types.js';
import { kubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/kubeconfig.js';
import { FakeApiServer, serviceCidr } from '../../kit/fake-apiserver.js';
import { capturingLogger, eventually, FAST_BACKOFF, type LogLine } from '../../kit/helpers.js';

/** Written out rather than imported, so a change to the text the operator reads fails here. */
const HINT = 'set --service-cidr (ROUTABILITY_WEBHOOK_SERVICE_CIDR) to the service range of the cluster';

const ready = { type: 'Ready', status: 'True', reason: '' };
const terminatingCondition = { type: 'Ready', status: 'False', reason: 'Terminating' };

/** One object with one CIDR and this status (none when undefined). */
const withStatus = (status: ServiceCIDRObject['status']): ServiceCIDRObject => ({
  metadata: { name: 'one' },
  spec: { cidrs: ['10.200.0.0/16'] },
  ...(status === undefined ? {} : { status }),
});

describe('rangesFromServiceCidrs', () => {
  // Only Ready=False with reason Terminating (what the ServiceCIDR controller sets while deleting) counts.
  it.each([
    { case: 'Ready False Terminating', status: { conditions: [terminatingCondition] }, terminating: true },
    {
      case: 'Terminating after another condition',
      status: { conditions: [{ type: 'Progressing', status: 'True' }, terminatingCondition] },
      terminating: true,
    },
    { case: 'Ready True', status: { conditions: [ready] }, terminating: false },
    {
      case: 'Ready True with reason Terminating',
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Terminating' }] },
      terminating: false,
    },
    {
      case: 'Ready False for another reason',
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'OverlappingCIDRs' }] },
      terminating: false,
    },
    {
      case: 'another type False Terminating',
      status: { conditions: [{ type: 'Other', status: 'False', reason: 'Terminating' }] },
      terminating: false,
    },
    { case: 'no conditions', status: { conditions: [] }, terminating: false },
    { case: 'a status without conditions', status: {}, terminating: false },
    { case: 'no status at all', status: undefined, terminating: false },
  ])('$case: terminating $terminating', ({ status, terminating }) => {
    const { ranges, skipped } = rangesFromServiceCidrs([withStatus(status)]);
    expect(ranges.all.map((r) => [r.cidr, r.terminating])).toEqual([['10.200.0.0/16', terminating]]);
    expect(skipped).toEqual([]);
  });

  it('reads objects with parts missing, and cidrs entries that are not strings, without throwing', () => {
    const objects = [
      { spec: { cidrs: ['10.1.0.0/16'] } }, // no metadata (no name, no deletionTimestamp)
      { metadata: { name: 'no-spec' } },
      { metadata: { name: 'no-cidrs' }, spec: {} },
      { metadata: { name: 'odd' }, spec: { cidrs: [42, null, { cidr: '10.3.0.0/16' }, '10.2.0.0/16'] } },
    ] as unknown as ServiceCIDRObject[];
    const { ranges, skipped } = rangesFromServiceCidrs(objects);
    expect(ranges.key()).toBe('10.1.0.0/16,10.2.0.0/16');
    expect(skipped).toEqual([]);
  });

  // The key is the identity the watch compares to tell a change: it must not depend on list order.
  // The nameless object comes in both raw forms: metadata without a name, and no metadata at all.
  const orders = [
    ['named order', ['a', undefined, 'b']],
    ['reverse order', ['b', undefined, 'a']],
    ['nameless last', ['b', 'a', undefined]],
    ['nameless first', [undefined, 'a', 'b']],
  ] as const;
  it.each(
    orders.flatMap(([order, names]) =>
      (['no name', 'no metadata'] as const).map((nameless) => ({ order, names, nameless })),
    ),
  )(
    'sorts the objects by name whatever the list order ($order); one with $nameless first',
    ({ names, nameless }) => {
      const cidrOf = { a: '10.1.0.0/16', b: '10.2.0.0/16', none: '10.9.0.0/16' };
      const objects = names.map((name) =>
        name !== undefined
          ? { metadata: { name }, spec: { cidrs: [cidrOf[name]] } }
          : nameless === 'no name'
            ? { metadata: {}, spec: { cidrs: [cidrOf.none] } }
            : { spec: { cidrs: [cidrOf.none] } },
      );
      expect(rangesFromServiceCidrs(objects).ranges.key()).toBe('10.9.0.0/16,10.1.0.0/16,10.2.0.0/16');
    },
  );

  it('leaves out a CIDR this parser refuses and keeps the others, saying which and why', () => {
    const { ranges, skipped } = rangesFromServiceCidrs([
      { metadata: { name: 'a' }, spec: { cidrs: ['10.96.0.0/16', '10.100.0.1/16'] } },
      { metadata: { name: 'b' }, spec: { cidrs: ['fd00:10:96::/112', 'not-a-cidr'] } },
    ]);
    expect(ranges.key()).toBe('10.96.0.0/16,fd00:10:96::/112');
    expect(skipped).toEqual([
      '"10.100.0.1/16" has host bits set; did you mean 10.100.0.0/16?',
      '"not-a-cidr" is not a CIDR (expected address/prefix, e.g. 10.96.0.0/12)',
    ]);
  });

  it('reports nothing skipped when every entry parses, and no ranges for no objects', () => {
    expect(rangesFromServiceCidrs([serviceCidr('kubernetes', ['10.96.0.0/16'])]).skipped).toEqual([]);
    const none = rangesFromServiceCidrs([]);
    expect(none.ranges.isEmpty).toBe(true);
    expect(none.skipped).toEqual([]);
  });
});

let fake: FakeApiServer;
const sources: RangeSource[] = [];

beforeEach(async () => {
  fake = await FakeApiServer.start();
});

afterEach(async () => {
  for (const s of sources.splice(0)) await s.close();
  await fake.close();
});

function loaded() {
  return loadKubeconfig({ kubeconfig: fake.kubeconfigPath, env: {} });
}

describe('listServiceCidrs', () => {
  it('lists one API version, and names the list and the server in its errors', async () => {
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    const client = kubeClient(loaded().kc);
    try {
      const list = await listServiceCidrs(client, 'v1beta1', 5_000);
      expect(list.items.map((o) => o.spec?.cidrs)).toEqual([['10.96.0.0/16']]);
      expect(fake.listCount('servicecidrs', 'v1beta1')).toBe(1);
      fake.failLists('servicecidrs', 1, 500);
      await expect(listServiceCidrs(client, 'v1', 5_000)).rejects.toThrow(
        `list ServiceCIDRs at ${fake.url}: HTTP 500`,
      );
    } finally {
      client.close();
    }
  });
});

describe('startServiceCidrWatch', () => {
  /** A watch over the fake with no extraDetail, a capturing logger, and a count of onChange calls. */
  function watch(): { source: RangeSource; lines: LogLine[]; changes: () => number; description: string } {
    const { logger, lines } = capturingLogger();
    const { kc, description } = loaded();
    const source = startServiceCidrWatch({
      client: kubeClient(kc),
      description,
      logger,
      metrics: clusterMetrics(new Registry()),
      backoff: FAST_BACKOFF,
    });
    sources.push(source);
    let changes = 0;
    source.onChange!(() => changes++);
    return { source, lines, changes: () => changes, description };
  }
  const key = (s: RangeSource) => s.current()?.key();
  const rangeLogs = (lines: LogLine[]) =>
    lines.filter((l) => String(l.msg).startsWith('service ranges ')).map((l) => [l.msg, l['old'], l['new']]);

  it('logs the first ranges and every change, "(none)" for no ranges, and is not ready while there are none', async () => {
    const w = watch();
    await eventually(() => /no ServiceCIDR objects/.test(w.source.readiness().reason ?? ''), 'empty list');
    expect(w.source.readiness()).toEqual({
      ready: false,
      reason: `the cluster has no ServiceCIDR objects: ${HINT}`,
    });
    expect(w.lines.find((l) => l.msg === 'service ranges from the ServiceCIDR objects')).toMatchObject({
      level: 30,
      source: 'ServiceCIDR',
      apiVersion: 'networking.k8s.io/v1',
      old: null,
      new: '(none)',
      objects: 0,
    });

    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    await eventually(() => key(w.source) === '10.96.0.0/16', 'the ADDED ServiceCIDR');
    expect(w.source.readiness()).toEqual({ ready: true });
    fake.remove('servicecidrs', 'kubernetes');
    await eventually(() => key(w.source) === undefined, 'the DELETED ServiceCIDR');

    expect(rangeLogs(w.lines)).toEqual([
      ['service ranges from the ServiceCIDR objects', null, '(none)'],
      ['service ranges changed', '(none)', '10.96.0.0/16'],
      ['service ranges changed', '10.96.0.0/16', '(none)'],
    ]);
    expect(w.lines.find((l) => l.msg === 'service ranges changed')).toMatchObject({
      source: 'ServiceCIDR',
      objects: 1,
    });
    expect(w.changes()).toBe(3);
  });

  it('an event that leaves the ranges as they were logs nothing and tells no listener', async () => {
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    const w = watch();
    await eventually(() => w.source.readiness().ready, 'ranges ready');
    expect(w.changes()).toBe(1);
    // A second object with the same CIDR: one more object, the same ranges.
    fake.put('servicecidrs', serviceCidr('copy', ['10.96.0.0/16']));
    const objects = () => (w.source.describe()['watch'] as { objects?: number }).objects;
    await eventually(() => objects() === 2, 'the watch to apply the second object');
    // The listeners are told one turn after the watch's cache is updated.
    await new Promise((r) => setImmediate(r));
    expect(w.changes()).toBe(1);
    expect(rangeLogs(w.lines)).toEqual([
      ['service ranges from the ServiceCIDR objects', null, '10.96.0.0/16'],
    ]);
  });

  it('warns once about entries it cannot use, again only when they change, not when they are fixed', async () => {
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    fake.put('servicecidrs', serviceCidr('bad', ['10.100.0.1/16']));
    const w = watch();
    await eventually(() => key(w.source) === '10.96.0.0/16', 'ranges ready');
    const skipWarnings = () => w.lines.filter((l) => l.msg === 'ServiceCIDR entries ignored');
    const badOnce = [
      expect.objectContaining({
        level: 40,
        skipped: ['"10.100.0.1/16" has host bits set; did you mean 10.100.0.0/16?'],
      }),
    ];
    expect(skipWarnings()).toEqual(badOnce);

    // Another change (objects sort by name: bad, extra, kubernetes), the same bad entry: not said again.
    fake.put('servicecidrs', serviceCidr('extra', ['10.101.0.0/16']));
    await eventually(() => key(w.source) === '10.101.0.0/16,10.96.0.0/16', 'the extra range');
    expect(skipWarnings()).toEqual(badOnce);

    // Fixed: nothing to warn about.
    fake.put('servicecidrs', serviceCidr('bad', ['10.100.0.0/16']));
    await eventually(() => key(w.source) === '10.100.0.0/16,10.101.0.0/16,10.96.0.0/16', 'the fixed range');
    expect(skipWarnings()).toEqual(badOnce);

    // Broken again after the fix: said again.
    fake.put('servicecidrs', serviceCidr('bad', ['10.100.0.1/16']));
    await eventually(() => key(w.source) === '10.101.0.0/16,10.96.0.0/16', 'the broken range left out');
    expect(skipWarnings()).toEqual([...badOnce, ...badOnce]);
  });

  it('once closed, says so in /readyz rather than blaming the cluster', async () => {
    const w = watch();
    await eventually(() => /no ServiceCIDR objects/.test(w.source.readiness().reason ?? ''), 'empty list');
    await w.source.close();
    expect(w.source.readiness()).toEqual({ ready: false, reason: 'the ServiceCIDR watch is stopped' });
  });

  it('without the API: an error naming the server, the reason in /readyz, and empty ranges in /readyz?verbose', async () => {
    fake.serveVersions('servicecidrs', []);
    const w = watch();
    await eventually(() => (w.source.describe()['watch'] as { state: string }).state === 'absent', 'absent');
    expect(w.source.readiness()).toEqual({
      ready: false,
      reason: `the cluster serves no ServiceCIDR API (networking.k8s.io/v1 or v1beta1; Kubernetes 1.31+ needed): ${HINT}`,
    });
    // No extraDetail was given: nothing but the watch's own detail.
    expect(w.source.describe()).toEqual({
      source: 'cluster ServiceCIDR objects',
      cluster: w.description,
      ranges: [],
      terminating: [],
      watch: expect.objectContaining({ state: 'absent' }),
    });
    expect(w.lines.filter((l) => l.level === 50)).toEqual([
      expect.objectContaining({
        server: w.description,
        msg: `the cluster serves no ServiceCIDR API (networking.k8s.io/v1 or v1beta1): ${HINT}`,
      }),
    ]);
  });
});
