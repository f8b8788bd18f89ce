/** Which revision source --gep-revision and the available credentials give. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { selectRevisionSource, type RevisionSource } from '../../src/cluster/crd-revision-source.js';
import { GATEWAY_CRD_NAME } from '../../src/crd/patch.js';
import type { GepRevisionSetting } from '../../src/rules/revision.js';
import { FakeApiServer } from './fake-apiserver.js';
import { storedGatewayCrd } from './gateway-crd.js';
import { capturingLogger, eventually, FAST_BACKOFF } from './helpers.js';

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

async function select(setting: GepRevisionSetting, kubeconfig?: string) {
  const { logger, lines } = capturingLogger();
  const registry = new Registry();
  source = await selectRevisionSource({
    setting,
    logger,
    registry,
    kubeconfigOptions: { ...NO_CREDENTIALS, kubeconfig },
    backoff: FAST_BACKOFF,
  });
  return { source, lines, registry };
}

describe('selecting the revision source', () => {
  it.each(['provisional', 'experimental'] as const)(
    '--gep-revision %s is fixed, whatever the cluster',
    async (r) => {
      fake = await FakeApiServer.start();
      const { source: s, lines, registry } = await select(r, fake.kubeconfigPath);
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
    const { source: s } = await select('auto', join(dir, 'kubeconfig'));
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
    const { source: s } = await select('auto', fake.kubeconfigPath);
    await eventually(() => s.current() !== undefined, 'the CRD');
    expect(s.current()).toBe('experimental');
    expect(s.describe()['source']).toBe('auto: the Gateway CRD of the cluster');
  });
});
