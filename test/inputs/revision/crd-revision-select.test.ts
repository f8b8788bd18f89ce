/**
 * Which revision source --gep-revision and the available credentials give,
 * and selectRevisionSource as an operator sees it: the log line each choice
 * writes (with the gep-revision component), the /readyz detail of
 * credentials that cannot be loaded, --dev's ignored kubeconfig, and the
 * backoff handed on to the CRD watch.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  selectRevisionSource,
  type RevisionSource,
} from '../../../src/inputs/revision/crd-revision-source.js';
import { GATEWAY_CRD_NAME } from '../../../src/crd/patch.js';
import type { BackoffOptions } from '../../../src/kube/watch.js';
import type { GepRevisionSetting } from '../../../src/rules/revision.js';
import { FakeApiServer } from '../../kit/fake-apiserver.js';
import { storedGatewayCrd } from '../../kit/gateway-crd.js';
import { capturingLogger, eventually, FAST_BACKOFF } from '../../kit/helpers.js';

let source: RevisionSource | undefined;
let fake: FakeApiServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await source?.close();
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  source = fake = dir = undefined;
});

const NO_CREDENTIALS = { env: {}, home: '/nonexistent-home', serviceAccountTokenFile: '/nonexistent/token' };
const HINT = 'set --gep-revision provisional or experimental (ROUTABILITY_WEBHOOK_GEP_REVISION)';

async function select(
  setting: GepRevisionSetting,
  opts: { kubeconfig?: string; noCluster?: string; backoff?: Partial<BackoffOptions> } = {},
) {
  const { logger, lines } = capturingLogger();
  const registry = new Registry();
  source = await selectRevisionSource({
    setting,
    logger,
    registry,
    kubeconfigOptions: { ...NO_CREDENTIALS, kubeconfig: opts.kubeconfig },
    ...(opts.noCluster !== undefined ? { noCluster: opts.noCluster } : {}),
    backoff: opts.backoff ?? FAST_BACKOFF,
  });
  return { source, lines, registry };
}

describe('selecting the revision source', () => {
  it.each(['provisional', 'experimental'] as const)(
    '--gep-revision %s is fixed, whatever the cluster',
    async (r) => {
      fake = await FakeApiServer.start();
      const { source: s, lines, registry } = await select(r, { kubeconfig: fake.kubeconfigPath });
      expect(s.current()).toBe(r);
      expect(s.readiness()).toEqual({ ready: true });
      expect(s.describe()).toEqual({ revision: r, source: `--gep-revision ${r}` });
      expect(lines.map((l) => l.msg)).toContain(`GEP-5093 revision in force: ${r} (--gep-revision ${r})`);
      expect(await registry.metrics()).toContain(`routability_webhook_gep_revision{revision="${r}"} 1`);
      expect(fake.requests.filter((q) => q.path.includes('customresourcedefinitions'))).toEqual([]);
    },
  );

  it('auto without any credentials is provisional, and says why', async () => {
    const { source: s } = await select('auto');
    expect(s.current()).toBe('provisional');
    expect(s.readiness().ready).toBe(true);
    expect(s.describe()['source']).toBe('--gep-revision auto without a cluster (no Kubernetes credentials)');
  });

  it('auto with credentials that cannot be loaded is not ready, naming the flag', async () => {
    dir = await mkdtemp(join(tmpdir(), 'crd-select-'));
    await writeFile(join(dir, 'kubeconfig'), 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n');
    const { source: s } = await select('auto', { kubeconfig: join(dir, 'kubeconfig') });
    expect(s.current()).toBeUndefined();
    expect(s.readiness()).toMatchObject({
      ready: false,
      reason: expect.stringMatching(
        /^cannot read the Gateway CRD: .*; set --gep-revision provisional or experimental/,
      ),
    });
  });

  it('auto with a cluster follows its Gateway CRD', async () => {
    fake = await FakeApiServer.start();
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('experimental'));
    const { source: s } = await select('auto', { kubeconfig: fake.kubeconfigPath });
    await eventually(() => s.current() !== undefined, 'the CRD');
    expect(s.current()).toBe('experimental');
    expect(s.describe()['source']).toBe('auto: the Gateway CRD of the cluster');
  });
});

describe('the revision source chosen, as logged and described', () => {
  it.each([
    { setting: 'provisional', noCluster: undefined, why: '--gep-revision provisional' },
    { setting: 'experimental', noCluster: undefined, why: '--gep-revision experimental' },
    {
      setting: 'auto',
      noCluster: 'the kubeconfig names no current context',
      why: '--gep-revision auto without a cluster (--dev ignored the kubeconfig)',
    },
  ] as const)(
    '$why: fixed at its revision, logged once with its source, the cluster left alone',
    async ({ setting, noCluster, why }) => {
      // A readable cluster is there: neither a fixed flag nor --dev's ignored kubeconfig reads it.
      fake = await FakeApiServer.start();
      const { source: s, lines } = await select(setting, {
        kubeconfig: fake.kubeconfigPath,
        ...(noCluster !== undefined ? { noCluster } : {}),
      });
      const revision = setting === 'auto' ? 'provisional' : setting;
      expect(s.current()).toBe(revision);
      expect(s.readiness()).toEqual({ ready: true });
      expect(s.describe()).toEqual({ revision, source: why });
      expect(lines).toEqual([
        expect.objectContaining({
          level: 30,
          component: 'gep-revision',
          gepRevision: revision,
          source: why,
          msg: `GEP-5093 revision in force: ${revision} (${why})`,
        }),
      ]);
      expect(fake.requests).toEqual([]);
    },
  );

  it('auto with credentials that cannot be loaded: an error line, and a detail naming the flag', async () => {
    dir = await mkdtemp(join(tmpdir(), 'crd-source-'));
    await writeFile(join(dir, 'kubeconfig'), 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n');
    const { source: s, lines, registry } = await select('auto', { kubeconfig: join(dir, 'kubeconfig') });
    const reason = s.readiness().reason ?? '';
    expect(reason).toMatch(/^cannot read the Gateway CRD: .+/);
    expect(reason.endsWith(`; ${HINT}`)).toBe(true);
    expect(s.describe()).toEqual({ revision: null, source: 'auto: the Gateway CRD of the cluster', reason });
    expect(lines).toEqual([
      expect.objectContaining({ level: 50, component: 'gep-revision', gepRevision: 'auto', msg: reason }),
    ]);
    // Neither revision is in force.
    const metrics = await registry.metrics();
    expect(metrics).toContain('routability_webhook_gep_revision{revision="provisional"} 0');
    expect(metrics).toContain('routability_webhook_gep_revision{revision="experimental"} 0');
    await s.close();
  });

  it('auto with a cluster: the watch retries with the backoff given, and logs as gep-revision', async () => {
    fake = await FakeApiServer.start();
    fake.forbid('customresourcedefinitions');
    // A long first delay (the watch's default is 0.5 s ± 20 %): no retry happens during the test.
    const { source: s, lines } = await select('auto', {
      kubeconfig: fake.kubeconfigPath,
      backoff: { ...FAST_BACKOFF, initialMs: 40_000, maxMs: 40_000 },
    });
    await eventually(() => /HTTP 403/.test(s.readiness().reason ?? ''), 'the 403');
    const watch = s.describe()['watch'] as { nextRetryInMs?: number };
    expect(watch.nextRetryInMs).toBeGreaterThan(20_000);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line['component']).toBe('gep-revision');
  });
});
