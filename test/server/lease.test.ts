/**
 * The audit Lease the server starts once (src/server/lease.ts) and hands to
 * the audit and the params sync: none with the audit off, without a cluster
 * or without usable credentials; else the Lease in the pod's namespace under
 * the pod's name, with the flags' timing, logged as the audit's, and handed
 * back at stop.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LeaderElector } from '../../src/kube/lease.js';
import { startAuditLease, type AuditLeaseParts } from '../../src/server/lease.js';
import { FakeApiServer } from '../kit/fake-apiserver.js';
import { capturingLogger } from '../kit/helpers.js';
import { eventually } from '../kit/eventually.js';

const emptyHome = mkdtempSync(join(tmpdir(), 'server-lease-home-'));
const CONFIG: AuditLeaseParts['config'] = {
  auditIntervalMs: 60_000,
  auditLease: 'the-audit',
  auditLeaseDurationMs: 3_000,
  auditLeaseRetryPeriodMs: 1_000,
  kubeconfig: undefined,
};

let fake: FakeApiServer | undefined;
let lease: LeaderElector | undefined;
afterEach(async () => {
  await lease?.stop();
  await fake?.close();
  lease = fake = undefined;
});

const until = (predicate: () => boolean, what: string, ms = 10_000) => eventually(predicate, what, ms, 20);

describe('startAuditLease: none', () => {
  const bad = join(emptyHome, 'bad-kubeconfig');
  writeFileSync(bad, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
  it.each([
    ['when --dev ignored the kubeconfig', {}, 'unusable'],
    ['without credentials', {}, undefined],
    ['with a kubeconfig that does not load', { kubeconfig: bad }, undefined],
  ])('%s', async (_name, config, noCluster) => {
    const { logger, lines } = capturingLogger();
    const started = await startAuditLease({
      config: { ...CONFIG, ...config },
      logger,
      noCluster,
      env: {},
      home: emptyHome,
    });
    expect(started).toBeUndefined();
    // The audit, looking at the same credentials, is the one to say why.
    expect(lines).toEqual([]);
  });
});

describe('startAuditLease: none with --audit-interval=0', () => {
  it('even with credentials, asking the API server nothing', async () => {
    fake = await FakeApiServer.start();
    const config = { ...CONFIG, auditIntervalMs: 0, kubeconfig: fake.kubeconfigPath };
    const started = await startAuditLease({ config, logger: capturingLogger().logger, noCluster: undefined });
    expect(started).toBeUndefined();
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.requests).toEqual([]);
  });
});

describe('startAuditLease: the Lease', () => {
  it("in the pod's namespace under its name, with the flags' timing, logged as the audit's; released at stop", async () => {
    fake = await FakeApiServer.start();
    const { logger, lines } = capturingLogger();
    lease = await startAuditLease({
      config: CONFIG,
      logger,
      noCluster: undefined,
      // Found through the env it is given (KUBECONFIG), not the flag nor process.env.
      env: { POD_NAMESPACE: 'routability', POD_NAME: 'replica-a', KUBECONFIG: fake.kubeconfigPath },
      home: emptyHome,
    });
    expect(lease?.lease).toBe('routability/the-audit');
    await until(() => lease!.isLeader(), 'leadership');
    expect(fake.leases.get('routability/the-audit')).toMatchObject({
      spec: { holderIdentity: 'replica-a', leaseDurationSeconds: 3 },
    });
    expect(lines.find((l) => l['msg'] === 'became leader')).toMatchObject({
      component: 'audit',
      lease: 'routability/the-audit',
      identity: 'replica-a',
    });
    const stopping = lease!;
    lease = undefined;
    await stopping.stop();
    expect(fake.leases.get('routability/the-audit')).toMatchObject({ spec: { holderIdentity: '' } });
    expect(stopping.isLeader()).toBe(false);
  });
});
