/**
 * End to end: the built `serve --audit-reports …` against the fake Kubernetes
 * API. The leader writes a namespace's report when a ServiceCIDR change makes
 * its Gateways fail, and removes it when they are clean again; with the report
 * CRD absent it says so once and the audit (its metrics) goes on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startServeAgainstApi, type RunningServer, type ServingAgainstApi } from '../kit/server-process.js';
import { FakeApiServer, gateway, serviceCidr } from '../kit/fake-apiserver.js';
import { FakeReports } from '../kit/fake-reports.js';
import { eventually } from '../kit/eventually.js';
import { httpGet } from '../kit/http.js';
import { REPORT_APIS, REPORT_NAME } from '../../src/audit/reports.js';
import { reportValidator } from './report-crds.js';

let fake: FakeApiServer | undefined;
let served: ServingAgainstApi | undefined;
let server: RunningServer | undefined;

afterEach(async () => {
  await served?.stop();
  await fake?.close();
  served = server = fake = undefined;
});

async function start(reports: string): Promise<RunningServer> {
  fake!.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
  fake!.put(
    'gateways',
    gateway('apps', 'external', {
      spec: [{ type: 'IPAddress', value: '10.100.0.5', routability: 'External' }],
    }),
  );
  fake!.put(
    'gateways',
    gateway('apps', 'cluster-ip', {
      spec: [{ type: 'IPAddress', value: '10.96.0.20', routability: 'Cluster' }],
    }),
  );
  served = await startServeAgainstApi(fake!.kubeconfigPath, {
    prefix: 'serve-reports-',
    args: ['--no-check-allocated-ips', '--audit-interval', '1h', '--audit-reports', reports],
    env: { POD_NAMESPACE: 'routability', POD_NAME: 'replica-a' },
  });
  return served.server;
}

describe('serve --audit-reports', () => {
  it('policyreport: a report appears when a range change makes a Gateway fail, and goes when it is clean', async () => {
    fake = await FakeApiServer.start();
    const store = FakeReports.attach(fake, REPORT_APIS.policyreport, reportValidator('policyreportKyverno'));
    server = await start('policyreport');
    const s = server;
    const passes = (): number => s.logs.filter((l) => l['msg'] === 'audit pass done').length;
    await eventually(async () => passes() >= 1, 'an audit pass', 15_000, 50);
    expect(store.objects.size).toBe(0);

    fake.put('servicecidrs', serviceCidr('extra', ['10.100.0.0/16']));
    await eventually(
      async () => store.get('apps', REPORT_NAME) !== undefined,
      'the report written',
      15_000,
      50,
    );
    const report = store.get('apps', REPORT_NAME)!;
    expect(report['summary']).toMatchObject({ fail: 1, warn: 0 });
    expect(report['results']).toMatchObject([
      {
        policy: 'ExternalAddressInsideServiceRange',
        result: 'fail',
        resources: [{ kind: 'Gateway', namespace: 'apps', name: 'external' }],
      },
    ]);

    fake.remove('servicecidrs', 'extra');
    await eventually(
      async () => store.get('apps', REPORT_NAME) === undefined,
      'the report deleted',
      15_000,
      50,
    );
    expect(store.writes.map((w) => w.method)).toEqual(['POST', 'DELETE']);
    const verbose = JSON.parse((await httpGet(s.healthPort, '/readyz?verbose')).body) as {
      detail?: { audit?: { reports?: unknown } };
    };
    expect(verbose.detail?.audit?.reports).toMatchObject({ state: 'written' });
  });

  it('openreports with the CRD absent: one log line, and the audit goes on', async () => {
    fake = await FakeApiServer.start();
    const store = FakeReports.attach(fake, REPORT_APIS.openreports, reportValidator('openreports'));
    store.served = false;
    server = await start('openreports');
    const s = server;
    const passes = (): number => s.logs.filter((l) => l['msg'] === 'audit pass done').length;
    await eventually(async () => passes() >= 1, 'an audit pass', 15_000, 50);
    fake.put('servicecidrs', serviceCidr('extra', ['10.100.0.0/16']));
    await eventually(async () => passes() >= 2, 'a second audit pass', 15_000, 50);
    expect(s.logs.filter((l) => String(l['msg']).includes('is not served'))).toHaveLength(1);
    expect((await httpGet(s.healthPort, '/metrics')).body).toContain(
      'routability_webhook_audit_findings{code="ExternalAddressInsideServiceRange",scope="spec"} 1',
    );
    expect(store.objects.size).toBe(0);
  });
});
