/**
 * The audit inside `serve` (src/audit/server.ts) in process, against the fake
 * Kubernetes API: why it is off (interval 0, --dev without a cluster, no
 * credentials, a kubeconfig that does not load, no Lease handed in), and when
 * on, led by the Lease the server starts (server/lease.ts): in the pod's
 * namespace under the pod's name, a pass as leader with its metrics, what
 * /readyz?verbose shows, leadership listeners, report objects with
 * --audit-reports, and the gauge when the Lease is released.
 * serve-audit.test.ts sees the same through the built server.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startServerAudit, type ServerAudit } from '../../src/audit/server.js';
import { staticSources } from '../../src/inputs/ranges/static-source.js';
import { ruleInputs } from '../../src/inputs/rule-inputs.js';
import { NO_KUBECONFIG_REASON } from '../../src/kube/kubeconfig-source.js';
import type { LeaderElector } from '../../src/kube/lease.js';
import { startAuditLease } from '../../src/server/lease.js';
import { FIXTURE_SETTINGS } from '../kit/app.js';
import { DUAL_STACK } from '../kit/gateways.js';
import { FakeApiServer, gateway } from '../kit/fake-apiserver.js';
import { capturingLogger } from '../kit/helpers.js';
import { FakeReports } from '../kit/fake-reports.js';
import { MANAGED_BY, MANAGED_BY_LABEL, REPORT_APIS, REPORT_NAME } from '../../src/audit/reports.js';
import { eventually } from '../kit/eventually.js';

const emptyHome = mkdtempSync(join(tmpdir(), 'server-audit-home-'));

const logs = capturingLogger;
const OUTSIDE = { type: 'IPAddress', value: '192.168.7.7', routability: 'Cluster' };

const inputs = () => ruleInputs({ settings: FIXTURE_SETTINGS, sources: staticSources(DUAL_STACK, 'test') });

async function value(registry: Registry, name: string): Promise<number | undefined> {
  return (await registry.getSingleMetric(name)?.get())?.values[0]?.value;
}

let fake: FakeApiServer | undefined;
let audit: ServerAudit | undefined;
let lease: LeaderElector | undefined;
afterEach(async () => {
  await Promise.all([audit?.stop(), lease?.stop()]);
  await fake?.close();
  audit = fake = lease = undefined;
});

/** The audit Lease as the server starts it: 3 s, renewed every second. */
async function startLease(
  name: string,
  env: Readonly<Record<string, string | undefined>>,
  kubeconfig: string | undefined,
): Promise<LeaderElector> {
  const config = {
    auditIntervalMs: 3_600_000,
    auditLease: name,
    auditLeaseDurationMs: 3_000,
    auditLeaseRetryPeriodMs: 1_000,
    kubeconfig,
  };
  const started = await startAuditLease({ config, logger: logs().logger, noCluster: undefined, env });
  if (!started) throw new Error('no Lease started');
  return started;
}

describe('the audit is off', () => {
  const base = () => ({
    leadership: undefined,
    kubeconfig: undefined,
    registry: new Registry(),
    inputs: inputs(),
    env: {},
    home: emptyHome,
  });

  it('with --audit-interval=0, without looking for a cluster', async () => {
    const { logger, lines } = logs();
    const off = await startServerAudit({ ...base(), intervalMs: 0, logger, kubeconfig: '/nonexistent' });
    expect(off.describe()).toEqual({ enabled: false, reason: '--audit-interval=0' });
    await off.stop();
    expect(lines).toEqual([]);
  });

  it('when --dev ignored the kubeconfig', async () => {
    const { logger, lines } = logs();
    const off = await startServerAudit({ ...base(), intervalMs: 60_000, logger, noCluster: 'unusable' });
    const reason = 'no cluster to audit (--dev ignored the kubeconfig)';
    expect(off.describe()).toEqual({ enabled: false, reason });
    expect(lines.map((l) => [l['level'], l['component'], l['msg']])).toEqual([[30, 'audit', reason]]);
  });

  it('without credentials', async () => {
    const { logger } = logs();
    const off = await startServerAudit({ ...base(), intervalMs: 60_000, logger });
    expect(off.describe()).toEqual({
      enabled: false,
      reason: `no cluster to audit: ${NO_KUBECONFIG_REASON}`,
    });
  });

  it('with a kubeconfig that does not load, saying why', async () => {
    const { logger } = logs();
    const bad = join(emptyHome, 'bad-kubeconfig');
    writeFileSync(bad, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    const off = await startServerAudit({ ...base(), intervalMs: 60_000, logger, kubeconfig: bad });
    const described = off.describe() as { enabled: boolean; reason: string };
    expect(described.enabled).toBe(false);
    expect(described.reason).toMatch(/^no cluster to audit: .+/);
    expect(described.reason).not.toContain(NO_KUBECONFIG_REASON);
  });
});

describe('the audit is off without the Lease', () => {
  it('when the server could not start one: nothing listed, saying why', async () => {
    fake = await FakeApiServer.start();
    fake.put('gateways', gateway('apps', 'plain', {}));
    const { logger, lines } = logs();
    const off = await startServerAudit({
      intervalMs: 60_000,
      leadership: undefined,
      kubeconfig: fake.kubeconfigPath,
      logger,
      registry: new Registry(),
      inputs: inputs(),
      env: {},
    });
    expect(off.describe()).toEqual({ enabled: false, reason: 'no audit lease' });
    expect(lines.map((l) => [l['component'], l['msg']])).toEqual([['audit', 'no audit lease']]);
    await new Promise((r) => setTimeout(r, 2_500));
    expect(fake.requests.filter((r) => r.resource === 'gateways')).toEqual([]);
  });
});

describe('the audit is on', () => {
  it('takes the Lease in its namespace under its pod name, audits as leader, and releases the Lease at stop', async () => {
    fake = await FakeApiServer.start();
    fake.put('gateways', gateway('apps', 'external', { spec: [{ type: 'IPAddress', value: '10.96.0.5' }] }));
    fake.put('gateways', gateway('apps', 'plain', {}));
    const { logger, lines } = logs();
    const registry = new Registry();
    const env = { POD_NAMESPACE: 'routability', POD_NAME: 'replica-a' };
    lease = await startLease('the-audit', env, fake.kubeconfigPath);
    audit = await startServerAudit({
      intervalMs: 3_600_000,
      leadership: lease,
      kubeconfig: fake.kubeconfigPath,
      logger,
      registry,
      inputs: inputs(),
      env,
    });
    const started = lines.find((l) => l['msg'] === 'audit started; the replica holding the lease audits');
    expect(started).toMatchObject({
      component: 'audit',
      intervalSeconds: 3_600,
      server: fake.url,
      lease: 'routability/the-audit',
      reports: 'none',
    });
    const changes: boolean[] = [];
    const leadership = lease;
    const unsubscribe = leadership.onChange(() => changes.push(leadership.isLeader()));
    const stays: boolean[] = [];
    leadership.onChange(() => stays.push(leadership.isLeader()));
    await eventually(() => leadership.isLeader(), 'leadership');
    // Its own lease timing (3 s), not the default 15 s.
    expect(fake.leases.get('routability/the-audit')).toMatchObject({
      spec: { holderIdentity: 'replica-a', leaseDurationSeconds: 3 },
    });
    expect(await value(registry, 'routability_webhook_audit_leader')).toBe(1);
    // Leading triggers a pass: both Gateways judged.
    await eventually(
      async () => (await value(registry, 'routability_webhook_audit_gateways')) === 2,
      'a pass over both Gateways',
    );
    expect(changes).toEqual([true]);
    const described = audit.describe();
    expect(described).toMatchObject({
      enabled: true,
      election: { lease: 'routability/the-audit', identity: 'replica-a', leader: true },
    });
    expect(described).not.toHaveProperty('reports');
    // Listed in pages of 100.
    const lists = fake.requests.filter((r) => r.resource === 'gateways' && r.method === 'GET');
    expect(lists.length).toBeGreaterThan(0);
    expect(lists.every((r) => r.query['limit'] === '100')).toBe(true);
    unsubscribe();
    const stopping = [audit, lease];
    audit = lease = undefined;
    await Promise.all(stopping.map((s) => s.stop()));
    expect(fake.leases.get('routability/the-audit')).toMatchObject({ spec: { holderIdentity: '' } });
    // Stepping down at stop is heard by the listeners still subscribed, and shown in the gauge.
    expect([changes, stays]).toEqual([[true], [true, false]]);
    expect(await value(registry, 'routability_webhook_audit_leader')).toBe(0);
  });

  it('writes report objects after a pass with --audit-reports, and shows the writer', async () => {
    fake = await FakeApiServer.start();
    const reports = FakeReports.attach(fake, REPORT_APIS.policyreport, (object) => ({
      errors: [],
      stored: object,
    }));
    // A Cluster address outside the service ranges (a violation), and a namespace with nothing to report.
    fake.put('gateways', gateway('apps', 'external', { spec: [OUTSIDE] }));
    fake.put('gateways', gateway('clean', 'plain', {}));
    const { logger } = logs();
    // Found through the env it is given (KUBECONFIG), not the flag nor process.env.
    const env = { POD_NAMESPACE: 'routability', POD_NAME: 'replica-b', KUBECONFIG: fake.kubeconfigPath };
    lease = await startLease('reports-audit', env, undefined);
    audit = await startServerAudit({
      intervalMs: 3_600_000,
      leadership: lease,
      reports: 'policyreport',
      kubeconfig: undefined,
      logger,
      registry: new Registry(),
      inputs: inputs(),
      env,
    });
    await eventually(() => lease!.isLeader(), 'leadership');
    await eventually(() => reports.get('apps', REPORT_NAME) !== undefined, 'the report of apps');
    const report = reports.get('apps', REPORT_NAME)!;
    expect(report).toMatchObject({
      apiVersion: 'wgpolicyk8s.io/v1alpha2',
      kind: 'PolicyReport',
      metadata: { namespace: 'apps', labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
      summary: { fail: 1, warn: 0 },
    });
    const results = report['results'] as { result: string; rule: string; resources: unknown[] }[];
    expect(results.map((r) => [r.result, r.rule, r.resources])).toEqual([
      [
        'fail',
        'ClusterAddressOutsideServiceRange',
        [expect.objectContaining({ kind: 'Gateway', name: 'external', namespace: 'apps' })],
      ],
    ]);
    // Only namespaces with findings get a report.
    expect([...reports.objects.keys()]).toEqual([`apps/${REPORT_NAME}`]);
    await eventually(
      () => (audit!.describe()['reports'] as { state?: string } | undefined)?.state === 'written',
      'written',
    );
    expect(audit.describe()['reports']).toMatchObject({
      api: 'policyreports.wgpolicyk8s.io/v1alpha2',
      state: 'written',
    });
  });
});
