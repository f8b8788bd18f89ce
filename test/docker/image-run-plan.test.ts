// The image test (scripts/test-image.mjs) runs the container the way the chart's pod runs it by
// reading the rendered Deployment. These checks keep that translation honest: it must follow the
// chart's values, and refuse a pod spec it cannot mirror rather than run something weaker.
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { helmBinary, one, render, repoRoot } from '../chart/helm.js';

interface Plan {
  args: string[];
  uid: number;
  gid: number;
  fsGroup: number;
  tlsMountPath: string;
  tlsDefaultMode: number;
  graceSeconds: number;
  preStopSleepSeconds: number;
  memoryLimitBytes?: number;
}
interface ChartModule {
  VALUES: string[][];
  quantityBytes: (q: string) => number;
  podRunPlan: (pod: unknown) => Plan;
  podmanRunFlags: (plan: Plan, opts: { tlsDir: string }) => string[];
}
interface VolumeModule {
  secretVolume: (
    dir: string,
    opts: { uid: number; gid: number; mode: number },
  ) => { update: (files: Record<string, Buffer>) => void };
}
interface LayersModule {
  installedPackages: (files: string[], root: string) => Set<string>;
}
const load = async <T>(path: string) => (await import(pathToFileURL(join(repoRoot, path)).href)) as T;
const chart = await load<ChartModule>('scripts/image/chart.mjs');
const { secretVolume } = await load<VolumeModule>('scripts/image/secret-volume.mjs');
const { installedPackages } = await load<LayersModule>('scripts/image/layers.mjs');

const helm = helmBinary();
const imageTestValues = {
  setJson: {
    'webhook.serviceCIDRs': ['10.96.0.0/12', 'fd00:10:96::/112'],
    'webhook.checkAllocatedIPs': false,
  },
};

describe.skipIf(!helm.path)('the image test runs the pod the chart renders', () => {
  it('uses the values the image test renders with', () => {
    expect(chart.VALUES.flat()).toEqual([
      '--set-json',
      'webhook.serviceCIDRs=["10.96.0.0/12","fd00:10:96::/112"]',
      '--set',
      'webhook.checkAllocatedIPs=false',
    ]);
  });

  it('mirrors user, groups, read-only root, capabilities, /tmp, the TLS mount and the arguments', async () => {
    const pod = one(await render(imageTestValues), 'Deployment').spec.template.spec;
    const plan = chart.podRunPlan(pod);
    const flags = chart.podmanRunFlags(plan, { tlsDir: '/host/tls' }).join(' ');
    expect(flags).toContain('--read-only --read-only-tmpfs=false');
    expect(flags).toContain('--user 65532:65532');
    expect(flags).toContain('--group-add 65532');
    expect(flags).toContain('--cap-drop=ALL');
    expect(flags).toContain('--security-opt no-new-privileges');
    expect(flags).toMatch(/--tmpfs \/tmp:rw,mode=1777,nosuid,nodev,size=16777216/);
    expect(flags).toContain('-v /host/tls:/tls:ro');
    expect(flags).toContain(`--memory ${chart.quantityBytes(pod.containers[0].resources.limits.memory)}`);
    expect(plan.args).toEqual(pod.containers[0].args);
    expect(plan.args).toContain('--no-check-allocated-ips');
    expect(plan.tlsDefaultMode).toBe(0o440);
    expect(plan.graceSeconds - plan.preStopSleepSeconds).toBeGreaterThan(0);
  });

  it('follows the chart when its values change', async () => {
    const pod = one(
      await render({
        ...imageTestValues,
        setJson: {
          ...imageTestValues.setJson,
          securityContext: { runAsUser: 1234, runAsGroup: 4321, readOnlyRootFilesystem: false },
          'webhook.port': 9443,
        },
        set: { 'resources.limits.memory': '300Mi' },
      }),
      'Deployment',
    ).spec.template.spec;
    const plan = chart.podRunPlan(pod);
    const flags = chart.podmanRunFlags(plan, { tlsDir: '/t' }).join(' ');
    expect(flags).toContain('--user 1234:4321');
    expect(flags).not.toContain('--read-only');
    expect(flags).toContain(`--memory ${300 * 2 ** 20}`);
    expect(flags).toContain('-p 127.0.0.1::9443');
    expect(plan.args).toContain('--port=9443');
  });

  it('refuses a pod spec without a user or without the TLS Secret volume', async () => {
    const pod = one(await render(imageTestValues), 'Deployment').spec.template.spec;
    const noUser = structuredClone(pod);
    delete noUser.securityContext.runAsUser;
    delete noUser.containers[0].securityContext.runAsUser;
    expect(() => chart.podRunPlan(noUser)).toThrow(/runAsUser/);
    const noTls = structuredClone(pod);
    noTls.volumes = noTls.volumes.filter((v: { secret?: unknown }) => !v.secret);
    expect(() => chart.podRunPlan(noTls)).toThrow(/Secret volume/);
  });
});

describe('quantityBytes', () => {
  it.each([
    ['256Mi', 256 * 2 ** 20],
    ['1Gi', 2 ** 30],
    ['16Mi', 16 * 2 ** 20],
    ['500M', 500e6],
    ['1024', 1024],
  ])('%s is %d bytes', (q, bytes) => expect(chart.quantityBytes(q)).toBe(bytes));
  it('rejects what it cannot read', () => expect(() => chart.quantityBytes('lots')).toThrow(/lots/));
});

describe('secretVolume lays files out as the kubelet does', () => {
  const dir = mkdtempSync(join(tmpdir(), 'secret-volume-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;

  it('names point through ..data into one timestamped folder, swapped whole on update', () => {
    const volume = secretVolume(dir, { uid, gid, mode: 0o440 });
    volume.update({ 'tls.crt': Buffer.from('one') });
    const first = readlinkSync(join(dir, '..data'));
    expect(readlinkSync(join(dir, 'tls.crt'))).toBe(join('..data', 'tls.crt'));
    expect(readFileSync(join(dir, 'tls.crt'), 'utf8')).toBe('one');
    volume.update({ 'tls.crt': Buffer.from('two') });
    const second = readlinkSync(join(dir, '..data'));
    expect(second).not.toBe(first);
    expect(readFileSync(join(dir, 'tls.crt'), 'utf8')).toBe('two');
    // The previous version is gone and no temporary link is left behind.
    expect(readdirSync(dir).sort()).toEqual(['..data', second, 'tls.crt'].sort());
  });
});

describe('installedPackages', () => {
  it('finds package roots, scoped and nested, and nothing else', () => {
    const files = [
      'app/node_modules/a/package.json',
      'app/node_modules/a/lib/package.json',
      'app/node_modules/@s/b/package.json',
      'app/node_modules/@s/b/node_modules/c/package.json',
      'app/package.json',
      'usr/node_modules/x/package.json',
    ];
    expect([...installedPackages(files, 'app')].sort()).toEqual([
      'node_modules/@s/b',
      'node_modules/@s/b/node_modules/c',
      'node_modules/a',
    ]);
  });
});
