/**
 * Two replicas of the built `serve` with the audit and its reports on, against
 * one fake API server, each through a client of its own (a port and a
 * kubeconfig), on a 3 s Lease renewed every second (renew deadline 2 s):
 *
 * 1. The leader's Lease requests hang (a renewal stuck on its network path)
 *    while everything else it sends is served — the case where nothing but its
 *    own renew deadline can stop its writes. Judged from the fake's request
 *    log: no Gateway page or report request of the old leader arrives later
 *    than its last renewal + the renew deadline (+ 0.5 s for a loaded
 *    machine), the other replica's take-over arrives after the lease expired,
 *    and the two replicas' audit requests never overlap in time.
 *    The same again with the Lease requests refused (each connection reset as
 *    it arrives) on the replica that leads then.
 * 2. SIGTERM to the leader, whose Lease writes the fake answers 600 ms late:
 *    the fake stores and answers the release (holderIdentity "",
 *    leaseDurationSeconds 1) before the process exits, and the other replica
 *    takes over before the lease could have expired.
 *
 * Each test goes on from the one before (the replica that took over leads):
 * starting two servers costs more than any of the tests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_APIS, REPORT_NAME } from '../../src/audit/reports.js';
import {
  FakeApiServer,
  gateway,
  serviceCidr,
  type LeaseWrite,
  type RequestRecord,
} from '../kit/fake-apiserver.js';
import { FakeReports } from '../kit/fake-reports.js';
import type { FaultAction } from '../kit/fault-injection.js';
import { startServeAgainstApi, type ServingAgainstApi } from '../kit/server-process.js';
import { eventually, sleep } from '../kit/eventually.js';

const LEASE_MS = 3_000;
const RETRY_MS = 1_000;
/** The holder acts as leader until this long after its last renewal: duration − retry period. */
const RENEW_DEADLINE_MS = LEASE_MS - RETRY_MS;
/** How late after the renew deadline an old leader's last request may arrive: a loaded machine's delay, far below the 1 s left until expiry. */
const SLACK_MS = 500;
const LEASE_KEY = 'routability/audit';
const REPLICAS = ['replica-a', 'replica-b'] as const;
/** Stored findings depend on it: Gateway apps/external's External address lies inside it. */
const EXTRA = serviceCidr('extra', ['10.100.0.0/16']);

let fake: FakeApiServer;
let reports: FakeReports;
const served = new Map<string, ServingAgainstApi>();
/** What each test measured, printed at the end (docs/dev/reliability.md). */
const figures: Record<string, unknown> = {};

function holder(): string | undefined {
  const spec = fake.leases.get(LEASE_KEY)?.['spec'] as { holderIdentity?: string } | undefined;
  return spec?.holderIdentity;
}

/** Lease writes the fake stored from `client` naming `holderIdentity`. */
function leaseWrites(client: string, holderIdentity: string): LeaseWrite[] {
  return fake.leaseWrites.filter(
    (w) => w.request.client === client && w.spec['holderIdentity'] === holderIdentity,
  );
}

const renewTime = (w: LeaseWrite): number => Date.parse(String(w.spec['renewTime']));

/** The audit's requests of a replica: Gateway pages and report lists and writes. */
function auditRequests(client: string): RequestRecord[] {
  return fake.requests.filter(
    (r) => r.client === client && (r.resource === 'gateways' || r.resource === 'policyreports'),
  );
}

beforeAll(async () => {
  fake = await FakeApiServer.start();
  reports = FakeReports.attach(fake, REPORT_APIS.policyreport);
  fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
  fake.put('servicecidrs', EXTRA);
  fake.put(
    'gateways',
    gateway('apps', 'external', {
      spec: [{ type: 'IPAddress', value: '10.100.0.5', routability: 'External' }],
    }),
  );
  await Promise.all(
    REPLICAS.map(async (name) => {
      const { kubeconfigPath } = await fake.client(name);
      const s = await startServeAgainstApi(kubeconfigPath, {
        prefix: `lease-${name}-`,
        args: [
          ...['--no-check-allocated-ips', '--gep-revision', 'provisional', '--audit-interval', '1h'],
          ...['--audit-reports', 'policyreport', '--audit-lease', 'audit'],
          ...[
            '--audit-lease-duration',
            `${LEASE_MS / 1000}s`,
            '--audit-lease-retry-period',
            `${RETRY_MS / 1000}s`,
          ],
        ],
        env: { POD_NAMESPACE: 'routability', POD_NAME: name },
      });
      served.set(name, s);
    }),
  );
}, 90_000);

afterAll(async () => {
  fake.faults.clearAll();
  await Promise.all([...served.values()].map((s) => s.stop()));
  await fake?.close();
  process.stderr.write(`audit lease: ${JSON.stringify(figures)}\n`);
});

/** When the current holder's run of Lease writes began (performance.now()): its tenure. */
function tenureStart(leader: string): number {
  let start = 0;
  let previous: unknown;
  for (const w of fake.leaseWrites) {
    const h = w.spec['holderIdentity'];
    if (h === leader && previous !== leader) start = w.request.at;
    previous = h;
  }
  return start;
}

let extraPresent = true;

/**
 * Cuts the leader's Lease requests off with `action` while everything else it
 * sends is served, changes the findings every 2.2 s (each change is a pass
 * 2 s later on whoever thinks it leads: an old leader still auditing would
 * write after its deadline) until the other replica has taken over and
 * removed the stale report; then judges the request log.
 */
async function cutOffTheLeader(action: FaultAction): Promise<void> {
  if (!extraPresent) fake.put('servicecidrs', EXTRA);
  extraPresent = true;
  // The leader's pass found apps/external inside the extra range and wrote the namespace's report.
  await eventually(() => reports.get('apps', REPORT_NAME) !== undefined, 'the report', 30_000);
  const leader = holder()!;
  const follower = REPLICAS.find((r) => r !== leader)!;
  expect(REPLICAS).toContain(leader);
  const since = tenureStart(leader);
  const cut = fake.faults.add({ client: leader, resource: 'leases' }, action);
  try {
    fake.remove('servicecidrs', 'extra');
    await sleep(2_200);
    fake.put('servicecidrs', EXTRA);
    await sleep(2_200);
    fake.remove('servicecidrs', 'extra');
    extraPresent = false;
    // The new leader's pass removes the report the old one wrote (extra gone: no findings).
    await eventually(() => holder() === follower, 'the take-over', 15_000);
    await eventually(
      () => reports.get('apps', REPORT_NAME) === undefined,
      'the new leader deleting the report',
      15_000,
    );
  } finally {
    cut.clear();
  }

  const lastRenew = renewTime(leaseWrites(leader, leader).at(-1)!);
  const takeover = leaseWrites(follower, follower).find((w) => w.request.at > since)!;
  const old = auditRequests(leader).filter((r) => r.at >= since);
  const now = auditRequests(follower).filter((r) => r.at >= since);
  const writes = (rs: RequestRecord[]) =>
    rs.filter((r) => r.resource === 'policyreports' && r.verb === 'write');
  const measured = {
    oldLeaderLastRequestAfterRenewMs: Math.max(...old.map((r) => r.wallAt)) - lastRenew,
    takeoverAfterRenewMs: takeover.request.wallAt - lastRenew,
    gapBetweenLeadersMs: Math.round(
      Math.min(...now.map((r) => r.at)) - Math.max(...old.map((r) => r.doneAt ?? r.at)),
    ),
    oldLeaderAuditRequests: old.length,
    newLeaderAuditRequests: now.length,
    leaseRequestsCut: cut.hits(),
  };
  figures[action.kind] = measured;
  const all = JSON.stringify(measured);
  // Both did audit and write.
  expect(writes(old).length, all).toBeGreaterThan(0);
  expect(writes(now).length, all).toBeGreaterThan(0);
  // The old leader: nothing after its renew deadline.
  for (const r of old) expect(r.wallAt - lastRenew, all).toBeLessThanOrEqual(RENEW_DEADLINE_MS + SLACK_MS);
  // The follower: only once the lease had expired.
  expect(takeover.request.wallAt, all).toBeGreaterThan(lastRenew + LEASE_MS);
  // Never both: every request of the old leader was answered before the new one's first.
  const oldEnd = Math.max(...old.map((r) => r.doneAt ?? Infinity));
  expect(oldEnd, all).toBeLessThan(Math.min(...now.map((r) => r.at)));
}

describe('the audit Lease between two serve replicas', () => {
  it('a leader whose Lease requests hang stops auditing and writing reports by its renew deadline; the other takes over only once the lease expired; their audit requests never overlap', async () => {
    await cutOffTheLeader({ kind: 'hang' });
  }, 60_000);

  it('the same when its Lease requests are refused (each connection reset as it arrives)', async () => {
    await cutOffTheLeader({ kind: 'reset' });
  }, 60_000);

  it('SIGTERM: the leader releases the Lease before it exits, however slowly answered, and the other replica takes over at once, not at expiry', async () => {
    const leader = holder()!;
    const other = REPLICAS.find((r) => r !== leader)!;
    // Right after a renewal, so that expiry (renewal + 3 s) and a take-over after release are far apart.
    const seen = leaseWrites(leader, leader).length;
    await eventually(() => leaseWrites(leader, leader).length > seen, 'a renewal', 15_000);
    const s = served.get(leader)!.server;
    // A slow API server: the release is answered 600 ms late (within the request's 1 s), and
    // serve must wait for it before it exits.
    fake.faults.add({ client: leader, resource: 'leases', verbs: ['write'] }, { kind: 'delay', ms: 600 });
    s.proc.kill('SIGTERM');
    const exit = await s.exited;
    const exitedAt = performance.now();
    expect(exit).toEqual({ code: 0, signal: null });
    await eventually(() => holder() === other, 'the take-over after release', 10_000);

    const lastRenew = renewTime(leaseWrites(leader, leader).at(-1)!);
    const release = leaseWrites(leader, '')[0];
    const takeover = leaseWrites(other, other).at(-1)!;
    figures['sigterm'] = {
      releaseAfterRenewMs: release ? release.request.wallAt - lastRenew : null,
      releaseBeforeExitMs: release?.request.doneAt ? Math.round(exitedAt - release.request.doneAt) : null,
      takeoverAfterReleaseMs: release ? takeover.request.wallAt - release.request.wallAt : null,
      takeoverAfterRenewMs: takeover.request.wallAt - lastRenew,
    };
    const all = JSON.stringify(figures['sigterm']);
    expect(release?.spec, all).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    expect(release!.request.status, all).toBe(200);
    expect(release!.request.doneAt!, all).toBeLessThan(exitedAt);
    // Before the released lease would have expired by itself.
    expect(takeover.request.wallAt, all).toBeLessThan(lastRenew + LEASE_MS);
    expect(takeover.request.wallAt, all).toBeGreaterThanOrEqual(release!.request.wallAt);
  }, 30_000);
});
