/**
 * How the cluster-backed sources are chosen and what each choice tells the
 * operator (src/inputs/ranges/live-sources.ts): the reason /readyz gives, the
 * /readyz?verbose detail, the start-up log lines, and the allocated-IP
 * lookups' own client and shutdown. Against the in-process fake API server.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NO_KUBECONFIG_REASON } from '../../../src/kube/kubeconfig.js';
import { FakeApiServer, serviceCidr } from '../../kit/fake-apiserver.js';
import { eventually, startSources, type Harness, type LogLine } from '../../kit/helpers.js';

/** Written out rather than imported, so a change to the text the operator reads fails here. */
const SERVICE_CIDR_FLAG_HINT =
  'set --service-cidr (ROUTABILITY_WEBHOOK_SERVICE_CIDR) to the service range of the cluster';

let fake: FakeApiServer;
let home: string;
const harnesses: Harness[] = [];

async function start(
  args: readonly string[],
  extra: Parameters<typeof startSources>[1] = {},
): Promise<Harness> {
  const h = await startSources(args, extra);
  harnesses.push(h);
  return h;
}

/** The log lines with this message (the test asserts their fields). */
const logged = (h: Harness, msg: string): LogLine[] => h.lines.filter((l) => l.msg === msg);

beforeEach(async () => {
  fake = await FakeApiServer.start();
  fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
  home = await mkdtemp(join(tmpdir(), 'home-'));
});

afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.sources.close();
  await fake.close();
  await rm(home, { recursive: true, force: true });
});

describe('no usable credentials', () => {
  it('without --dev and without any kubeconfig: not ready, naming the flags to set, and /readyz?verbose says there is no source', async () => {
    const h = await start([], { env: {}, home });
    const reason = `service ranges unknown: ${NO_KUBECONFIG_REASON}; ${SERVICE_CIDR_FLAG_HINT}, or --kubeconfig`;
    expect(h.sources.ranges.readiness()).toEqual({ ready: false, reason });
    expect(h.sources.ranges.current()).toBeUndefined();
    expect(h.sources.ranges.describe()).toEqual({ source: 'none', reason });
    expect(h.sources.allocatedIPs).toBeUndefined();
    // Said once, as an error, at start-up.
    expect(h.lines.filter((l) => l.level === 50).map((l) => l.msg)).toEqual([reason]);
  });

  it('without --dev and an unreadable --kubeconfig: not ready, naming the file (and not the flag it did set)', async () => {
    const missing = join(home, 'missing');
    const h = await start(['--kubeconfig', missing], { home });
    const { ready, reason } = h.sources.ranges.readiness();
    expect(ready).toBe(false);
    expect(reason).toMatch(
      new RegExp(`^service ranges unknown: cannot load kubeconfig ${missing} \\(--kubeconfig\\): .*ENOENT`),
    );
    // The file was given: "or --kubeconfig" would send the operator in a circle.
    expect(reason!.endsWith(`; ${SERVICE_CIDR_FLAG_HINT}`)).toBe(true);
    expect(h.sources.ranges.describe()).toEqual({ source: 'none', reason });
  });

  // --dev's embedded default, and the one warning that says why it is in force.
  it.each([
    {
      case: 'no kubeconfig at all',
      args: [] as string[],
      source: '--dev default 10.96.0.0/12 (no kubeconfig found)',
      msg: 'no kubeconfig found; service ranges: --dev embedded default',
      fields: { source: 'dev-default', ranges: '10.96.0.0/12' },
    },
    {
      case: 'a --kubeconfig that cannot be loaded',
      args: ['--kubeconfig', '/nonexistent/kubeconfig'],
      source: '--dev default 10.96.0.0/12 (kubeconfig unusable)',
      msg: 'kubeconfig unusable; service ranges: --dev embedded default',
      fields: {
        err: expect.stringMatching(
          /^cannot load kubeconfig \/nonexistent\/kubeconfig \(--kubeconfig\): .*ENOENT/,
        ),
        ranges: '10.96.0.0/12',
      },
    },
  ])(
    '--dev with $case: ready with the embedded default, saying why',
    async ({ args, source, msg, fields }) => {
      const h = await start(['--dev', ...args], { env: {}, home });
      expect(h.sources.ranges.readiness()).toEqual({ ready: true });
      expect(h.sources.ranges.current()!.key()).toBe('10.96.0.0/12');
      expect(h.sources.ranges.describe()).toEqual({ source, ranges: ['10.96.0.0/12'] });
      const warnings = h.lines.filter((l) => l.level === 40);
      expect(warnings).toEqual([expect.objectContaining({ msg, ...fields })]);
      expect(h.lines.some((l) => l.level === 50)).toBe(false);
    },
  );
});

describe('--service-cidr with an explicit --check-allocated-ips', () => {
  const FLAGS = ['--service-cidr', '10.96.0.0/16', '--check-allocated-ips'];

  it('without usable credentials: the flag ranges, no lookups, and two warnings saying what is skipped and why', async () => {
    const h = await start([...FLAGS, '--kubeconfig', join(home, 'missing')], { home });
    expect(h.sources.allocatedIPs).toBeUndefined();
    expect(h.sources.ranges.readiness()).toEqual({ ready: true });
    expect(h.sources.ranges.describe()).toEqual({ source: 'flag --service-cidr', ranges: ['10.96.0.0/16'] });
    expect(logged(h, 'cannot load Kubernetes credentials')).toEqual([
      expect.objectContaining({ level: 40, err: expect.stringContaining(join(home, 'missing')) }),
    ]);
    expect(
      logged(
        h,
        '--check-allocated-ips: no usable Kubernetes credentials; the ClusterAddressAllocated rule is skipped',
      ),
    ).toEqual([expect.objectContaining({ level: 40 })]);
  });

  it('with credentials: /readyz?verbose shows the flag ranges and the lookups', async () => {
    const h = await start([...FLAGS, '--kubeconfig', fake.kubeconfigPath], {
      lookup: { probeAtStart: false },
    });
    expect(h.sources.allocatedIPs).toBeDefined();
    expect(h.sources.ranges.describe()).toEqual({
      source: 'flag --service-cidr',
      ranges: ['10.96.0.0/16'],
      allocatedIPs: expect.objectContaining({ mode: 'on-demand lookups (GET ipaddresses/<ip>)' }),
    });
  });

  it('close() ends a lookup still waiting for the API server', async () => {
    // A lookup deadline far beyond the test: only close() can end the lookup.
    const h = await start([...FLAGS, '--kubeconfig', fake.kubeconfigPath], {
      lookup: { probeAtStart: false, timeoutMs: 120_000 },
    });
    const release = fake.holdGets('ipaddresses');
    let settled = false;
    const pending = h.sources.allocatedIPs!.lookup(['10.96.0.7']).then((answers) => {
      settled = true;
      return answers;
    });
    await fake.until(() => fake.getCount('ipaddresses') === 1, 'the lookup to reach the API server');
    await h.sources.close();
    // close() waits for the lookups it aborts; one more turn lets the answer reach the caller.
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(true);
    // Allowed unchecked, as any lookup that got no answer.
    expect((await pending).uncheckedReason!('10.96.0.7')).toEqual(expect.any(String));
    release();
  });

  it('a burst as large as the lookup concurrency reaches the API server at once, beyond the default socket pool', async () => {
    // 20 > the client's default pool (16) and the default concurrency (4): the pool follows the concurrency.
    const concurrency = 20;
    const h = await start([...FLAGS, '--kubeconfig', fake.kubeconfigPath], {
      lookup: { probeAtStart: false, concurrency, timeoutMs: 60_000, perReviewMax: concurrency },
    });
    const release = fake.holdGets('ipaddresses');
    const ips = Array.from({ length: concurrency }, (_, i) => `10.96.1.${i + 1}`);
    const pending = h.sources.allocatedIPs!.lookup(ips);
    await fake.until(
      () => fake.getCount('ipaddresses') === concurrency,
      `${concurrency} lookups in flight at the API server`,
    );
    release();
    const answers = await pending;
    // Every one answered (404: free), none given up for want of a socket.
    for (const ip of ips) expect(answers.uncheckedReason!(ip)).toBeUndefined();
  });
});

describe('the cluster ServiceCIDR objects', () => {
  it.each([
    { args: [] as string[], checkAllocatedIps: true },
    { args: ['--no-check-allocated-ips'], checkAllocatedIps: false },
  ])(
    'logs where the ranges come from (checkAllocatedIps $checkAllocatedIps) and shows the lookups in /readyz?verbose',
    async ({ args, checkAllocatedIps }) => {
      const h = await start(['--kubeconfig', fake.kubeconfigPath, ...args], {
        lookup: { probeAtStart: false },
      });
      const [line, ...more] = logged(h, 'service ranges: watching the ServiceCIDR objects of the cluster');
      expect(more).toEqual([]);
      expect(line).toMatchObject({
        level: 30,
        component: 'cluster',
        source: 'ServiceCIDR',
        cluster: `kubeconfig ${fake.kubeconfigPath} (--kubeconfig), server ${fake.url}`,
        checkAllocatedIps,
      });
      await eventually(() => h.sources.ranges.readiness().ready, 'ranges ready');
      const detail = h.sources.ranges.describe()['allocatedIPs'];
      if (checkAllocatedIps)
        expect(detail).toMatchObject({ mode: 'on-demand lookups (GET ipaddresses/<ip>)' });
      else expect(detail).toBe('off (--no-check-allocated-ips)');
    },
  );
});
