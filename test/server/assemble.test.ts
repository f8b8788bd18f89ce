/**
 * The assembled server in process (src/server/assemble.ts, startServer) against
 * the fake API server: it listens on both ports, follows the cluster's ranges,
 * takes the audit Lease, and close() returns only once the Lease is handed
 * back, however slowly the API server answers that write (on SIGTERM the
 * process exits when close() returns: a release still in flight would be
 * lost, and the other replica would wait out the lease).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseServeConfig } from '../../src/config/serve.js';
import { startServer, type ServerHandle } from '../../src/server/assemble.js';
import { FakeApiServer, serviceCidr } from '../kit/fake-apiserver.js';
import { capturingLogger } from '../kit/helpers.js';
import { FakeConfigMap } from './fake-configmap.js';
import { eventually, sleep } from '../kit/eventually.js';

const LEASE = 'routability/assembled-audit';
const SAVED = { POD_NAMESPACE: process.env['POD_NAMESPACE'], POD_NAME: process.env['POD_NAME'] };
let certDir: string;
let fake: FakeApiServer | undefined;
let handle: ServerHandle | undefined;

beforeAll(() => {
  certDir = mkdtempSync(join(tmpdir(), 'assemble-certs-'));
  // The audit's Lease identity (the chart sets both from the downward API).
  process.env['POD_NAMESPACE'] = 'routability';
  process.env['POD_NAME'] = 'replica-a';
});
afterEach(async () => {
  await handle?.close();
  handle = undefined;
  await fake?.close();
  fake = undefined;
});
afterAll(() => {
  rmSync(certDir, { recursive: true, force: true });
  for (const [name, value] of Object.entries(SAVED)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

async function serve(api: FakeApiServer, extra: readonly string[] = []) {
  const parsed = parseServeConfig(
    [
      '--dev',
      '--cert-dir',
      certDir,
      '--port',
      '0',
      '--health-port',
      '0',
      '--kubeconfig',
      api.kubeconfigPath,
      '--no-check-allocated-ips',
      '--gep-revision',
      'provisional',
      '--audit-interval',
      '1h',
      '--audit-lease',
      'assembled-audit',
      ...extra,
    ],
    {},
  );
  if (!parsed.ok) throw new Error(parsed.error);
  const { logger, lines } = capturingLogger();
  handle = await startServer(parsed.value, logger);
  return { handle, lines };
}

const holder = () =>
  (fake?.leases.get(LEASE)?.['spec'] as { holderIdentity?: string } | undefined)?.holderIdentity;

describe('startServer', () => {
  it('close() returns once the audit Lease is handed back, though the API server takes 1.5 s to write it', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    const { handle: h, lines } = await serve(fake);
    expect(h.port).toBeGreaterThan(0);
    expect(h.healthPort).toBeGreaterThan(0);
    expect(h.healthPort).not.toBe(h.port);
    expect(lines.find((l) => l.msg === 'listening')).toMatchObject({
      port: h.port,
      healthPort: h.healthPort,
      mtls: false,
      gepRevision: 'provisional',
    });
    await eventually(() => holder() === 'replica-a', 'the audit Lease taken', 10_000);
    fake.faults.add({ resource: 'leases', verbs: ['write'] }, { kind: 'delay', ms: 1_500 });
    handle = undefined;
    const started = performance.now();
    await h.close();
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(holder()).toBe('');
  });

  it('/readyz?verbose has every part in order, policy params included; /metrics has the process metrics', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    const cm = new FakeConfigMap('routability', 'params');
    fake.addRoute(cm.route);
    const { handle: h } = await serve(fake, [
      ...['--policy-params', 'routability/params'],
      ...['--audit-lease-duration', '6s', '--audit-lease-retry-period', '2s'],
    ]);
    const get = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${h.healthPort}${path}`);
      return { status: res.status, text: await res.text() };
    };
    await eventually(() => cm.data !== undefined, 'the params written', 10_000);
    let ready = await get('/readyz?verbose');
    for (let i = 0; i < 100 && ready.status !== 200; i++) {
      await sleep(50);
      ready = await get('/readyz?verbose');
    }
    const body = JSON.parse(ready.text) as {
      ready: boolean;
      failing: string[];
      detail: Record<string, unknown>;
    };
    expect([ready.status, body.ready, body.failing]).toEqual([200, true, []]);
    expect(Object.keys(body.detail)).toEqual([
      'certificate',
      'serviceRanges',
      'allocatedIPs',
      'audit',
      'gepRevision',
      'policyParams',
    ]);
    expect(body.detail['audit']).toMatchObject({ enabled: true, election: { lease: LEASE } });
    // The audit's Lease with the flags' timing.
    expect(fake.leases.get(LEASE)?.['spec']).toMatchObject({ leaseDurationSeconds: 6 });
    expect(body.detail['policyParams']).toMatchObject({ configMap: 'routability/params', state: 'in step' });
    const metrics = await get('/metrics');
    expect(metrics.text).toContain('\nprocess_cpu_user_seconds_total ');
    expect(metrics.text).toMatch(/\nroutability_webhook_policy_params_writes_total 1\n/);
  });
});
