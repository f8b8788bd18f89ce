/**
 * End to end: the built `serve` against the fake Kubernetes API audits the
 * stored Gateways, and its audit metrics follow ServiceCIDR changes: a range
 * added makes an External address a finding, the range deleted makes it clean
 * again — each reported within seconds, with no write to any Gateway.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startServeAgainstApi, type RunningServer, type ServingAgainstApi } from '../kit/server-process.js';
import { FakeApiServer, gateway, serviceCidr } from '../kit/fake-apiserver.js';
import { eventually } from '../kit/eventually.js';
import { httpGet } from '../kit/http.js';

let fake: FakeApiServer | undefined;
let served: ServingAgainstApi | undefined;
let server: RunningServer | undefined;

afterEach(async () => {
  await served?.stop();
  await fake?.close();
  served = server = fake = undefined;
});

/** The audit's series from /metrics, `name{labels} value` lines only. */
async function auditSeries(port: number): Promise<string[]> {
  const body = (await httpGet(port, '/metrics')).body;
  return body.split('\n').filter((l) => l.startsWith('routability_webhook_audit_findings{'));
}

describe('the background audit in serve', () => {
  it('judges stored Gateways and follows ServiceCIDR changes, from the replica that holds the lease', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    fake.put(
      'gateways',
      gateway('apps', 'cluster-ip', {
        spec: [{ type: 'IPAddress', value: '10.96.0.20', routability: 'Cluster' }],
      }),
    );
    fake.put(
      'gateways',
      gateway('apps', 'external', {
        spec: [{ type: 'IPAddress', value: '10.100.0.5', routability: 'External' }],
      }),
    );
    served = await startServeAgainstApi(fake.kubeconfigPath, {
      prefix: 'serve-audit-',
      args: ['--no-check-allocated-ips', '--audit-interval', '1h', '--audit-lease', 'test-audit'],
      env: { POD_NAMESPACE: 'routability', POD_NAME: 'replica-a' },
    });
    server = served.server;
    const s = server;
    const passes = (): number => s.logs.filter((l) => l['msg'] === 'audit pass done').length;

    await eventually(async () => passes() >= 1, 'an audit pass', 15_000, 50);
    expect(await auditSeries(s.healthPort)).toEqual([]);
    const metrics = (await httpGet(s.healthPort, '/metrics')).body;
    expect(metrics).toContain('routability_webhook_audit_gateways 2');
    expect(metrics).toContain('routability_webhook_audit_leader 1');
    expect(fake.leases.get('routability/test-audit')?.['spec']).toMatchObject({
      holderIdentity: 'replica-a',
    });
    expect(
      fake.requests.some((r) => r.path === '/apis/gateway.networking.k8s.io/v1/gateways' && r.query['limit']),
    ).toBe(true);

    // A range is added: the stored External address now lies inside the service range.
    fake.put('servicecidrs', serviceCidr('extra', ['10.100.0.0/16']));
    await eventually(
      async () => (await auditSeries(s.healthPort)).length > 0,
      'the audit metrics',
      15_000,
      50,
    );
    expect(await auditSeries(s.healthPort)).toEqual([
      'routability_webhook_audit_findings{code="ExternalAddressInsideServiceRange",scope="spec"} 1',
    ]);
    expect((await httpGet(s.healthPort, '/metrics')).body).toContain(
      'routability_webhook_audit_violating_gateways 1',
    );
    const changed = s.logs.filter((l) => l['msg'] === 'audit: findings changed');
    expect(changed.map((l) => l['gateway'])).toEqual(['apps/external']);

    // It is deleted again: clean, and said once.
    fake.remove('servicecidrs', 'extra');
    await eventually(
      async () => s.logs.some((l) => l['msg'] === 'audit: findings cleared'),
      'the findings cleared',
      15_000,
      50,
    );
    expect(await auditSeries(s.healthPort)).toEqual([]);

    const verbose = JSON.parse((await httpGet(s.healthPort, '/readyz?verbose')).body) as {
      detail?: { audit?: { enabled?: boolean; election?: { leader?: boolean } } };
    };
    expect(verbose.detail?.audit).toMatchObject({ enabled: true, election: { leader: true } });
  });
});
