/**
 * The Gateway CRD revision watch against the fake API server: the four cases
 * a cluster's Gateway CRD can be in (upstream's schema, this project's patch, no field, no CRD),
 * an unreadable CRD, outages after the first read, and live switches.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { RevisionSource } from '../../../src/inputs/revision/crd-revision.js';
import { GATEWAY_CRD_NAME } from '../../../src/crd/patch.js';
import { FakeApiServer } from '../../kit/fake-apiserver.js';
import { storedGatewayCrd } from '../../kit/gateway-crd.js';
import { eventually, startCrdRevisionWatch, type CrdWatchHarness } from '../../kit/helpers.js';

let fake: FakeApiServer | undefined;
let source: RevisionSource | undefined;
let dir: string | undefined;

afterEach(async () => {
  await source?.close();
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  fake = source = dir = undefined;
});

function start(kubeconfig: string): CrdWatchHarness {
  const h = startCrdRevisionWatch(kubeconfig);
  source = h.source;
  return h;
}

async function metric(registry: Registry, name: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((l) => l.startsWith(name));
}

const settled = (s: RevisionSource): boolean => s.describe()['crdState'] !== 'not read yet';

describe('the Gateway CRD decides the revision (--gep-revision auto)', () => {
  it("upstream's schema → experimental, read with a metadata.name field selector", async () => {
    fake = await FakeApiServer.start();
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('experimental'));
    fake.crds.set('httproutes.gateway.networking.k8s.io', { metadata: { name: 'x' }, spec: {} });
    const h = start(fake.kubeconfigPath);
    await eventually(() => h.source.current() !== undefined, 'a revision');
    expect(h.source.current()).toBe('experimental');
    expect(h.source.readiness()).toEqual({ ready: true });
    expect(h.source.describe()).toMatchObject({
      revision: 'experimental',
      crdState: 'experimental',
      crdGeneration: 1,
      summary: expect.stringContaining("upstream's schema (its CEL rule and message, maxLength 253)"),
    });
    expect(await metric(h.registry, 'routability_webhook_gep_revision')).toEqual(
      expect.arrayContaining([
        'routability_webhook_gep_revision{revision="provisional"} 0',
        'routability_webhook_gep_revision{revision="experimental"} 1',
      ]),
    );
    expect(await metric(h.registry, 'routability_webhook_gateway_crd_routability_missing')).toContain(
      'routability_webhook_gateway_crd_routability_missing 0',
    );
    expect(h.lines.map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/^GEP-5093 revision in force: experimental/),
    );
    await fake.until(() => fake!.watcherCount('customresourcedefinitions') === 1, 'the CRD watch');
    const crdRequests = fake.requests.filter((r) => r.path.startsWith('/apis/apiextensions.k8s.io/'));
    expect(crdRequests.length).toBeGreaterThanOrEqual(2);
    for (const r of crdRequests) {
      expect(r.path).toBe('/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
      expect(r.query['fieldSelector']).toBe(`metadata.name=${GATEWAY_CRD_NAME}`);
    }
  });

  it("this project's crd-patch schema → provisional", async () => {
    fake = await FakeApiServer.start();
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('provisional', { channel: 'experimental' }));
    const h = start(fake.kubeconfigPath);
    await eventually(() => h.source.current() !== undefined, 'a revision');
    expect(h.source.current()).toBe('provisional');
    expect(h.source.describe()['summary']).toContain("this project's crd-patch schema");
    expect(await metric(h.registry, 'routability_webhook_gep_revision')).toContain(
      'routability_webhook_gep_revision{revision="provisional"} 1',
    );
  });

  it('no routability in the CRD → ready (provisional), and the log, readiness detail and a metric say how to add it', async () => {
    fake = await FakeApiServer.start();
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('none'));
    const h = start(fake.kubeconfigPath);
    await eventually(() => settled(h.source), 'the first read');
    expect(h.source.readiness()).toEqual({ ready: true });
    expect(h.source.current()).toBe('provisional');
    const detail = h.source.describe();
    expect(detail['crdState']).toBe('field-missing');
    expect(detail['summary']).toMatch(
      /has no routability field \(v1, v1beta1\).*routability-webhook crd-patch --patch-cluster/,
    );
    expect(await metric(h.registry, 'routability_webhook_gateway_crd_routability_missing')).toContain(
      'routability_webhook_gateway_crd_routability_missing 1',
    );
    const warning = h.lines.find((l) => l.level === 40 && l.msg.includes('no routability field'));
    expect(warning?.msg).toContain('crd-patch');
  });

  it('no Gateway CRD (Gateway API not installed) → ready, and says so', async () => {
    fake = await FakeApiServer.start();
    const h = start(fake.kubeconfigPath);
    await eventually(() => settled(h.source), 'the first read');
    expect(h.source.readiness()).toEqual({ ready: true });
    expect(h.source.current()).toBe('provisional');
    expect(h.source.describe()).toMatchObject({
      crdState: 'not-installed',
      summary: expect.stringContaining('Gateway API is not installed'),
    });
    expect(h.lines.some((l) => l.level === 40 && l.msg.includes('Gateway API is not installed'))).toBe(true);
    // Installing Gateway API later is picked up by the same watch.
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('experimental'));
    await eventually(() => h.source.current() === 'experimental', 'the installed CRD');
  });

  it('forbidden (403) → not ready, naming --gep-revision; ready once RBAC allows it', async () => {
    fake = await FakeApiServer.start();
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('experimental'));
    fake.forbid('customresourcedefinitions');
    const h = start(fake.kubeconfigPath);
    await eventually(() => /HTTP 403/.test(h.source.readiness().reason ?? ''), 'the 403');
    const r = h.source.readiness();
    expect(r.ready).toBe(false);
    expect(r.reason).toMatch(/cannot read crd\/gateways.gateway.networking.k8s.io .*HTTP 403 \(forbidden/);
    expect(r.reason).toContain(
      'set --gep-revision provisional or experimental (ROUTABILITY_WEBHOOK_GEP_REVISION)',
    );
    expect(h.source.current()).toBeUndefined();
    expect(await metric(h.registry, 'routability_webhook_gep_revision')).toEqual(
      expect.arrayContaining([
        'routability_webhook_gep_revision{revision="provisional"} 0',
        'routability_webhook_gep_revision{revision="experimental"} 0',
      ]),
    );
    fake.forbid('customresourcedefinitions', false);
    await eventually(() => h.source.current() === 'experimental', 'the retry after RBAC was fixed');
    expect(h.source.readiness().ready).toBe(true);
  });

  it('an API server that does not answer before the first read → not ready, naming --gep-revision', async () => {
    fake = await FakeApiServer.start();
    const config = await readFile(fake.kubeconfigPath, 'utf8');
    await fake.close();
    fake = undefined;
    dir = await mkdtemp(join(tmpdir(), 'crd-revision-'));
    await writeFile(join(dir, 'kubeconfig'), config);
    const h = start(join(dir, 'kubeconfig'));
    await eventually(() => /ECONNREFUSED/.test(h.source.readiness().reason ?? ''), 'a refused connection');
    expect(h.source.readiness()).toMatchObject({
      ready: false,
      reason: expect.stringContaining('set --gep-revision'),
    });
    expect(h.source.current()).toBeUndefined();
  });

  it('a routability schema neither revision matches → not ready, naming --gep-revision', async () => {
    fake = await FakeApiServer.start();
    const crd = storedGatewayCrd('provisional');
    const odd = JSON.parse(
      JSON.stringify(crd).replaceAll('"pattern":"^(External|Cluster|', '"pattern":"^(Public|Cluster|'),
    ) as typeof crd;
    fake.crds.set(GATEWAY_CRD_NAME, odd);
    const h = start(fake.kubeconfigPath);
    await eventually(() => settled(h.source), 'the first read');
    expect(h.source.current()).toBeUndefined();
    expect(h.source.readiness()).toMatchObject({
      ready: false,
      reason: expect.stringMatching(/cannot tell which GEP-5093 revision .*rejects "".*set --gep-revision/),
    });
    expect(h.lines.some((l) => l.level === 50 && l.msg.includes('cannot tell which GEP-5093 revision'))).toBe(
      true,
    );
  });

  it('keeps the last revision through an API outage after the first read', async () => {
    fake = await FakeApiServer.start();
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('experimental'));
    const h = start(fake.kubeconfigPath);
    await eventually(() => h.source.current() === 'experimental', 'a revision');
    await fake.until(() => fake!.watcherCount('customresourcedefinitions') === 1, 'the CRD watch');
    fake.forbid('customresourcedefinitions');
    fake.dropWatches('customresourcedefinitions');
    await eventually(() => (h.source.describe()['watch'] as { restarts: number }).restarts >= 2, 'restarts');
    expect(h.source.current()).toBe('experimental');
    expect(h.source.readiness()).toEqual({ ready: true });
    fake.forbid('customresourcedefinitions', false);
    await fake.until(
      () => fake!.watcherCount('customresourcedefinitions') === 1,
      'the CRD watch again',
      10_000,
    );
  });

  it('switches live when the CRD changes, logged with both revisions', async () => {
    fake = await FakeApiServer.start();
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('provisional'));
    const h = start(fake.kubeconfigPath);
    await eventually(() => h.source.current() === 'provisional', 'provisional');
    await fake.until(() => fake!.watcherCount('customresourcedefinitions') === 1, 'the CRD watch');
    const lists = fake.listCount('customresourcedefinitions');
    // An upgrade to a Gateway API release whose CRD carries upstream's schema.
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('experimental', { generation: 2 }));
    await eventually(() => h.source.current() === 'experimental', 'the switch');
    expect(fake.listCount('customresourcedefinitions')).toBe(lists); // a watch event, not a relist
    const line = h.lines.find((l) => l.msg.startsWith('GEP-5093 revision switched'));
    expect(line).toMatchObject({
      level: 40,
      gepRevision: 'experimental',
      previousRevision: 'provisional',
      crdGeneration: 2,
      msg: expect.stringContaining('provisional → experimental'),
    });
    expect(h.source.describe()).toMatchObject({ switches: 1, lastSwitchAt: expect.any(String) });
    // Gateway API uninstalled: the CRD is gone.
    fake.crds.delete(GATEWAY_CRD_NAME);
    await eventually(() => h.source.describe()['crdState'] === 'not-installed', 'the deletion');
    expect(h.source.current()).toBe('provisional');
  });
});
