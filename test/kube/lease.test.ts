import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kubeClient } from '../../src/kube/client.js';
import { KubeConfig } from '../../src/kube/kubeconfig-model.js';
import { startLeaderElector, type LeaderElector } from '../../src/kube/lease.js';
import { FakeApiServer } from '../kit/fake-apiserver.js';
import { capturingLogger } from '../kit/helpers.js';
import { eventually } from '../kit/eventually.js';

let fake: FakeApiServer;
let electors: LeaderElector[] = [];

beforeEach(async () => {
  fake = await FakeApiServer.start();
});
afterEach(async () => {
  await Promise.all(electors.map((e) => e.stop()));
  electors = [];
  await fake.close();
});

function elector(
  identity: string,
  kubeconfig = fake.kubeconfigPath,
  logger = capturingLogger().logger,
  timing = { leaseDurationMs: 1_000, renewEveryMs: 100 },
): LeaderElector {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const e = startLeaderElector({
    client: kubeClient(kc),
    namespace: 'routability',
    name: 'audit',
    identity,
    logger,
    ...timing,
  });
  electors.push(e);
  return e;
}

const until = (predicate: () => boolean, what: string, ms = 10_000) => eventually(predicate, what, ms, 20);

describe('leader election over a Lease', () => {
  it('of two replicas exactly one leads, and the lease names it', async () => {
    const a = elector('pod-a');
    const b = elector('pod-b');
    await until(() => a.isLeader() || b.isLeader(), 'a leader');
    // Several renewals later there is still exactly one.
    await until(() => fake.requests.filter((r) => r.method === 'PUT').length >= 10, 'renewals');
    expect([a.isLeader(), b.isLeader()].filter(Boolean)).toHaveLength(1);
    const leader = a.isLeader() ? 'pod-a' : 'pod-b';
    const lease = fake.leases.get('routability/audit')!;
    expect(lease['spec']).toMatchObject({ holderIdentity: leader, leaseDurationSeconds: 1 });
    expect(String((lease['spec'] as { renewTime: string }).renewTime)).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/,
    );
  });

  it('a stopping leader releases the lease and the other replica takes over', async () => {
    const a = elector('pod-a');
    await until(() => a.isLeader(), 'pod-a leading');
    const b = elector('pod-b');
    await until(() => fake.requests.filter((r) => r.method === 'GET').length >= 6, 'pod-b to look');
    expect(b.isLeader()).toBe(false);
    await a.stop();
    expect(a.isLeader()).toBe(false);
    await until(() => b.isLeader(), 'pod-b taking over');
    const spec = fake.leases.get('routability/audit')!['spec'] as {
      holderIdentity: string;
      leaseTransitions: number;
    };
    expect(spec.holderIdentity).toBe('pod-b');
    expect(spec.leaseTransitions).toBe(1);
  });

  it('takes a lease left behind by a replica that died, once it has expired', async () => {
    fake.leases.set('routability/audit', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'audit', namespace: 'routability', resourceVersion: '5' },
      spec: {
        holderIdentity: 'dead-pod',
        leaseDurationSeconds: 1,
        renewTime: new Date().toISOString(),
        leaseTransitions: 3,
      },
    });
    const log = capturingLogger();
    const a = elector('pod-a', fake.kubeconfigPath, log.logger);
    await until(() => fake.requests.filter((r) => r.method === 'GET').length >= 2, 'a first look');
    expect(a.isLeader()).toBe(false);
    await until(() => a.isLeader(), 'the takeover');
    expect(fake.leases.get('routability/audit')!['spec']).toMatchObject({
      holderIdentity: 'pod-a',
      leaseTransitions: 4,
    });
    // The log names the replica it took over from, not itself.
    expect(log.lines.find((l) => l['msg'] === 'became leader')?.['why']).toBe(
      'took over an expired lease from dead-pod',
    );
  });

  it('steps down when it cannot renew, before the lease could expire for others', async () => {
    const a = elector('pod-a');
    await until(() => a.isLeader(), 'pod-a leading');
    await fake.close();
    await until(() => !a.isLeader(), 'stepping down');
    expect(a.describe()['lastError']).toBeTruthy();
    fake = await FakeApiServer.start(); // for afterEach
  });

  it('steps down once duration − renew interval has passed since its last renewal, not later', async () => {
    // A clock the test moves: the elector's rounds run every 100 ms of real time, but the
    // lease's age is what the test says it is. Lease 3 s, renewal every 100 ms: the holder
    // must step down from 2.9 s on, before the lease expires for others at 3 s.
    let t = 1_000_000;
    let looks = 0;
    const kc = new KubeConfig();
    kc.loadFromFile(fake.kubeconfigPath);
    const a = startLeaderElector({
      client: kubeClient(kc),
      namespace: 'routability',
      name: 'audit',
      identity: 'pod-a',
      logger: capturingLogger().logger,
      leaseDurationMs: 3_000,
      renewEveryMs: 100,
      now: () => (looks++, t),
    });
    electors.push(a);
    await until(() => a.isLeader(), 'pod-a leading');
    const renewedAt = t;
    await fake.close();
    /** Lets the elector run a few rounds at time `at` (each round reads the clock). */
    const roundsAt = async (at: number) => {
      t = at;
      const from = looks;
      await until(() => looks >= from + 6, `rounds at +${at - renewedAt} ms`);
    };
    await roundsAt(renewedAt + 2_000);
    expect(a.isLeader(), 'still within its lease: keeps leading').toBe(true);
    await roundsAt(renewedAt + 2_899);
    expect(a.isLeader(), '1 ms before duration − renew interval').toBe(true);
    await roundsAt(renewedAt + 2_950);
    expect(a.isLeader(), 'past duration − renew interval, 50 ms before the lease expires for others').toBe(
      false,
    );
    expect(String(a.describe()['lastError'])).not.toBe('');
    fake = await FakeApiServer.start(); // for afterEach
  });

  it('a renewal hanging on the network does not extend leadership: stepped down by the renew deadline, before expiry', async () => {
    // Renew deadline 1,000 - 400 = 600 ms; each request may hang 400 ms, and ticks queue behind it.
    const a = elector('pod-a', fake.kubeconfigPath, capturingLogger().logger, {
      leaseDurationMs: 1_000,
      renewEveryMs: 400,
    });
    await until(() => a.isLeader(), 'pod-a leading');
    fake.faults.add({ resource: 'leases' }, { kind: 'hang' });
    const renewTime = () =>
      Date.parse(
        String((fake.leases.get('routability/audit')?.['spec'] as Record<string, unknown>)['renewTime']),
      );
    const lastRenew = renewTime();
    await until(() => !a.isLeader(), 'stepping down', 5_000);
    const steppedDownAfter = Date.now() - lastRenew;
    expect(renewTime()).toBe(lastRenew);
    expect(steppedDownAfter).toBeGreaterThanOrEqual(590);
    expect(steppedDownAfter).toBeLessThan(1_000);
  });

  it('a slow but successful renewal counts from its renewTime, not its answer: stepped down by the renew deadline after it', async () => {
    // Lease 3 s, renewal every 1 s: the renew deadline is 2 s after the renewTime written, before
    // the lease expires for others at 3 s. One renewal is answered 700 ms late (within its 1 s
    // deadline), then no request gets an answer.
    const a = elector('pod-a', fake.kubeconfigPath, capturingLogger().logger, {
      leaseDurationMs: 3_000,
      renewEveryMs: 1_000,
    });
    await until(() => a.isLeader(), 'pod-a leading');
    const writes = fake.leaseWrites.length;
    fake.faults.add({ resource: 'leases', verbs: ['write'] }, { kind: 'delay', ms: 700 }, { count: 1 });
    await until(() => fake.leaseWrites.length > writes, 'the slow renewal stored', 5_000);
    fake.faults.add({ resource: 'leases' }, { kind: 'hang' });
    const spec = fake.leases.get('routability/audit')?.['spec'] as Record<string, unknown>;
    const renewTime = Date.parse(String(spec['renewTime']));
    expect(a.isLeader()).toBe(true);
    await until(() => !a.isLeader(), 'stepping down', 5_000);
    const steppedDownAfter = Date.now() - renewTime;
    expect(steppedDownAfter).toBeGreaterThanOrEqual(1_990);
    // Counted from the answer it would be 2,700 ms; the margin is for a busy machine's polling.
    expect(steppedDownAfter).toBeLessThan(2_500);
  });

  it('honours a Retry-After: no Lease request until it has passed', async () => {
    const a = elector('pod-a');
    await until(() => a.isLeader(), 'pod-a leading');
    const fault = fake.faults.add(
      { resource: 'leases' },
      { kind: 'status', code: 429, retryAfterSeconds: 1 },
      { count: 1 },
    );
    await until(() => fault.hits() === 1, 'the throttled request');
    const throttledAt = fake.requests.filter((r) => r.resource === 'leases').at(-1)!.at;
    await until(
      () => fake.requests.some((r) => r.resource === 'leases' && r.at > throttledAt),
      'the next Lease request',
    );
    const next = fake.requests.find((r) => r.resource === 'leases' && r.at > throttledAt)!;
    // Renewals come every 100 ms; the server asked for 1 s.
    expect(next.at - throttledAt).toBeGreaterThanOrEqual(950);
  });
});

describe('the elector handed to the audit and the params sync', () => {
  it('names its Lease, and tells every subscriber of each change until it unsubscribes', async () => {
    const a = elector('pod-a');
    expect(a.lease).toBe('routability/audit');
    const heard: boolean[] = [];
    const gone: boolean[] = [];
    a.onChange(() => heard.push(a.isLeader()));
    const unsubscribe = a.onChange(() => gone.push(a.isLeader()));
    await until(() => a.isLeader(), 'leadership');
    unsubscribe();
    electors = electors.filter((e) => e !== a);
    await a.stop();
    expect(heard).toEqual([true, false]);
    expect(gone).toEqual([true]);
  });
});
