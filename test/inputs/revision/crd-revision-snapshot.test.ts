/** check --from-cluster with --gep-revision auto: one read of the Gateway CRD beside the ranges. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readClusterSnapshot } from '../../../src/inputs/snapshot.js';
import { GATEWAY_CRD_NAME } from '../../../src/crd/patch.js';
import { FakeApiServer, serviceCidr } from '../../kit/fake-apiserver.js';
import { storedGatewayCrd } from '../../kit/gateway-crd.js';

let fake: FakeApiServer;
beforeEach(async () => {
  fake = await FakeApiServer.start();
  fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
});
afterEach(async () => {
  await fake.close();
});

describe('readClusterSnapshot({ readGepRevision: true })', () => {
  it('reads the Gateway CRD once by name and decides its revision', async () => {
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('experimental'));
    const snap = await readClusterSnapshot({ kubeconfig: fake.kubeconfigPath, readGepRevision: true });
    expect(snap.gepRevision).toMatchObject({ state: 'experimental', revision: 'experimental' });
    const crdRequests = fake.requests.filter((r) => r.path.includes('customresourcedefinitions'));
    expect(crdRequests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/${GATEWAY_CRD_NAME}`,
    ]);
  });

  it('no Gateway CRD: provisional, saying Gateway API is not installed', async () => {
    const snap = await readClusterSnapshot({ kubeconfig: fake.kubeconfigPath, readGepRevision: true });
    expect(snap.gepRevision).toMatchObject({ state: 'not-installed', revision: 'provisional' });
  });

  it('an unreadable CRD fails the snapshot, naming --gep-revision', async () => {
    fake.forbid('customresourcedefinitions');
    await expect(
      readClusterSnapshot({ kubeconfig: fake.kubeconfigPath, readGepRevision: true }),
    ).rejects.toThrow(
      /cannot read crd\/gateways.gateway.networking.k8s.io from .*HTTP 403.*set --gep-revision/,
    );
  });

  it('without readGepRevision the CRD is not read', async () => {
    fake.forbid('customresourcedefinitions');
    const snap = await readClusterSnapshot({ kubeconfig: fake.kubeconfigPath });
    expect(snap.gepRevision).toBeUndefined();
  });
});
