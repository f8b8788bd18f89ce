/**
 * serve keeps the policy's params ConfigMap equal to its service ranges
 * (`--policy-params`), against the fake API server: the built serve, running
 * in a namespace other than the ConfigMap's, updates it within seconds of a
 * ServiceCIDR change. The sync itself is tested in process in
 * test/server/params-sync.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paramsData } from '../../src/policy/index.js';
import { FakeApiServer, serviceCidr } from '../kit/fake-apiserver.js';
import { ranges } from '../kit/gateways.js';
import { startServeAgainstApi } from '../kit/server-process.js';
import { FakeConfigMap } from './fake-configmap.js';
import { eventually } from '../kit/eventually.js';

const NS = 'grw';
const NAME = 'grw-params';

describe('serve --policy-params (the built server)', () => {
  let fake: FakeApiServer;
  const cm = new FakeConfigMap(NS, NAME);
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    fake = await FakeApiServer.start();
    fake.addRoute(cm.route);
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    const serving = await startServeAgainstApi(fake.kubeconfigPath, {
      prefix: 'policy-params-',
      args: ['--policy-params', `${NS}/${NAME}`, '--no-check-allocated-ips', '--gep-revision', 'provisional'],
      // The pod runs in a namespace of its own: the flag names the ConfigMap's, and wins.
      env: { POD_NAMESPACE: 'grw-pods', POD_NAME: 'replica-a' },
    });
    stop = serving.stop;
  });
  afterAll(async () => {
    await stop?.();
    await fake.close();
  });

  it('updates the params ConfigMap within seconds of a ServiceCIDR change', async () => {
    await eventually(() => cm.data?.['serviceCIDRs'] === '10.96.0.0/16', 'the first write', 20_000);
    fake.put('servicecidrs', serviceCidr('secondary', ['fd00:10:96::/112']));
    const took = await eventually(
      () => cm.data?.['serviceCIDRs'] === '10.96.0.0/16,fd00:10:96::/112',
      'the write after the ServiceCIDR change',
      10_000,
    );
    console.log(`params ConfigMap updated ${Math.round(took)} ms after the ServiceCIDR change`);
    expect(cm.data).toEqual(paramsData(ranges('10.96.0.0/16', 'fd00:10:96::/112')));
  });
});
