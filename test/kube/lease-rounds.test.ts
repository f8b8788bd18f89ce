/**
 * Leader election round by round, against a scripted Lease store: what each
 * round reads and writes, when a replica takes a lease, when a leader steps
 * down and what it says, and what stop() hands back. Time is vitest's (the
 * renewal interval, the step-down timer, Retry-After) and the elector's clock
 * is that time plus a skew the test sets, so every deadline is read to the
 * millisecond. The store answers as the API server does: 404 for no Lease,
 * 409 for a create of an existing one or a write under a stale
 * resourceVersion (test/kube/lease.test.ts runs the same protocol over HTTP).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { KubeClient, KubeRequest } from '../../src/kube/client.js';
import { KubeApiError } from '../../src/kube/errors.js';
import { startLeaderElector, type LeaderElector } from '../../src/kube/lease.js';
import { capturingLogger } from '../kit/helpers.js';

const COLLECTION = '/apis/coordination.k8s.io/v1/namespaces/routability/leases';
const PATH = `${COLLECTION}/audit`;
const T0 = Date.parse('2026-01-01T00:00:00Z');

/** MicroTime as a Lease carries it (RFC 3339, six fractional digits). */
const micro = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

const apiError = (statusCode: number, retryAfter?: string) =>
  new KubeApiError({ statusCode, body: '', what: 'request', retryAfter });

type Obj = Record<string, unknown>;

/** A request as sent, and the (fake) time it was sent at. */
interface Sent extends KubeRequest {
  readonly at: number;
}

/**
 * One Lease, routability/audit, behind a scripted KubeClient. `fault` answers a
 * request before the store does (a rejected promise, or one that never settles
 * until `releaseHeld`); undefined leaves it to the store.
 */
class LeaseStore {
  stored: Obj | undefined;
  readonly sent: Sent[] = [];
  fault: ((req: KubeRequest) => Promise<unknown> | undefined) | undefined;
  private rv = 10;
  private readonly held: ((err: Error) => void)[] = [];
  readonly client = { json: (req: KubeRequest) => this.json(req) } as unknown as KubeClient;

  /** Stores a Lease with this spec, as another replica (or an earlier run) wrote it. */
  put(spec: Obj): void {
    this.stored = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'audit', namespace: 'routability', resourceVersion: String(++this.rv) },
      spec,
    };
  }

  spec(): Obj | undefined {
    return this.stored?.['spec'] as Obj | undefined;
  }

  /** A fault that holds every request matching `method` (all when omitted) unanswered. */
  hang(method?: string): void {
    this.fault = (req) =>
      method === undefined || (req.method ?? 'GET') === method
        ? new Promise((_, reject) => this.held.push(reject))
        : undefined;
  }

  /** A fault that answers every request matching `method` with this error (`count` times, default always). */
  failWith(error: Error, method?: string, count = Infinity): void {
    let left = count;
    this.fault = (req) => {
      if (left <= 0 || (method !== undefined && (req.method ?? 'GET') !== method)) return undefined;
      left--;
      return Promise.reject(error);
    };
  }

  /** A fault that answers the next `method` request `ms` later (of the timers' time), as the store would have then. */
  slowOnce(method: string, ms: number): void {
    let left = 1;
    this.fault = (req) => {
      if (left <= 0 || (req.method ?? 'GET') !== method) return undefined;
      left--;
      return new Promise((resolve) => setTimeout(resolve, ms)).then(() => this.serve(req));
    };
  }

  /** Answers every held request with an error. */
  releaseHeld(err = new Error('test over')): void {
    for (const reject of this.held.splice(0)) reject(err);
  }

  count(method: string, since = -Infinity): number {
    return this.sent.filter((r) => (r.method ?? 'GET') === method && r.at >= since).length;
  }

  private json(req: KubeRequest): Promise<unknown> {
    this.sent.push({ ...structuredClone(req), at: Date.now() });
    return this.fault?.(req) ?? Promise.resolve().then(() => this.serve(req));
  }

  private serve(req: KubeRequest): unknown {
    const method = req.method ?? 'GET';
    if (method === 'GET' && req.path === PATH) {
      if (!this.stored) throw apiError(404);
      return structuredClone(this.stored);
    }
    if (method === 'POST' && req.path === COLLECTION) {
      if (this.stored) throw apiError(409);
      return this.store(req.body as Obj);
    }
    if (method === 'PUT' && req.path === PATH) {
      if (!this.stored) throw apiError(404);
      const read = ((req.body as Obj)['metadata'] as Obj)['resourceVersion'];
      if (read !== (this.stored['metadata'] as Obj)['resourceVersion']) throw apiError(409);
      return this.store(req.body as Obj);
    }
    throw apiError(405);
  }

  private store(body: Obj): Obj {
    this.stored = structuredClone({
      ...body,
      metadata: { ...(body['metadata'] as Obj), resourceVersion: String(++this.rv) },
    });
    return structuredClone(this.stored);
  }
}

let store: LeaseStore;
/** The elector's clock minus vitest's: a clock that runs ahead of (or behind) the timers. */
let skew: number;
let electors: LeaderElector[];

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
  store = new LeaseStore();
  skew = 0;
  electors = [];
});
afterEach(async () => {
  store.fault = undefined;
  store.releaseHeld();
  await Promise.all(electors.map((e) => e.stop()));
  vi.useRealTimers();
});

/** Lets the round that came due run to its end. */
const settle = () => vi.advanceTimersByTimeAsync(0);

/** Replica pod-a over the store: lease 1 s and a renewal every 300 ms (renew deadline 700 ms) unless told. */
function start(timing: { leaseDurationMs?: number; renewEveryMs?: number } = {}) {
  const { logger, lines } = capturingLogger();
  const changes: boolean[] = [];
  const elector = startLeaderElector({
    client: store.client,
    namespace: 'routability',
    name: 'audit',
    identity: 'pod-a',
    logger,
    leaseDurationMs: timing.leaseDurationMs ?? 1_000,
    renewEveryMs: timing.renewEveryMs ?? 300,
    onChange: (leader) => changes.push(leader),
    now: () => Date.now() + skew,
  });
  electors.push(elector);
  /** The leadership log lines, with the fields an operator reads. */
  const leadership = () =>
    lines
      .filter((l) => l.msg === 'became leader' || l.msg === 'no longer leader')
      .map(({ msg, lease, identity, why }) => ({ msg, lease, identity, why }));
  /** The reason of the last leadership log line. */
  const lastWhy = () => leadership().at(-1)?.why;
  return { elector, changes, leadership, lastWhy };
}

/** pod-a, having created the lease at T0 and leading. */
async function leader(timing: { leaseDurationMs?: number; renewEveryMs?: number } = {}) {
  const a = start(timing);
  await settle();
  expect(a.changes).toEqual([true]);
  return a;
}

const became = (why: string) => ({
  msg: 'became leader',
  lease: 'routability/audit',
  identity: 'pod-a',
  why,
});
const steppedDown = (why: string) => ({
  msg: 'no longer leader',
  lease: 'routability/audit',
  identity: 'pod-a',
  why,
});

describe('creating and renewing the lease', () => {
  it('with no Lease yet, creates it with POST and leads, and says so once however often it renews', async () => {
    const a = start();
    await settle();
    expect(store.sent).toEqual([
      { path: PATH, timeoutMs: 300, at: T0 },
      {
        method: 'POST',
        path: COLLECTION,
        timeoutMs: 300,
        at: T0,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: 'audit', namespace: 'routability' },
          spec: {
            holderIdentity: 'pod-a',
            leaseDurationSeconds: 1,
            acquireTime: micro(T0),
            renewTime: micro(T0),
            leaseTransitions: 0,
          },
        },
      },
    ]);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.elector.describe()).toEqual({
      lease: 'routability/audit',
      identity: 'pod-a',
      leader: true,
      holder: 'pod-a',
    });
    await vi.advanceTimersByTimeAsync(900);
    expect(store.count('PUT')).toBe(3);
    // One change and one log line: renewals are not news.
    expect(a.changes).toEqual([true]);
    expect(a.leadership()).toEqual([became('created the lease')]);
  });

  it.each([
    { renewEveryMs: 300, leaseDurationMs: 1_000, timeoutMs: 300 },
    { renewEveryMs: 5_000, leaseDurationMs: 15_000, timeoutMs: 5_000 },
    { renewEveryMs: 10_000, leaseDurationMs: 30_000, timeoutMs: 5_000 },
  ])(
    'gives each Lease request the renewal interval to answer, at most 5 s (every $renewEveryMs ms: $timeoutMs ms)',
    async (t) => {
      start(t);
      await vi.advanceTimersByTimeAsync(2 * t.renewEveryMs);
      expect(store.count('PUT')).toBe(2);
      expect(new Set(store.sent.map((r) => r.timeoutMs))).toEqual(new Set([t.timeoutMs]));
    },
  );

  it('renews by moving renewTime only: acquireTime and leaseTransitions stay those of the acquisition', async () => {
    await leader();
    await vi.advanceTimersByTimeAsync(900);
    expect(store.spec()).toEqual({
      holderIdentity: 'pod-a',
      leaseDurationSeconds: 1,
      acquireTime: micro(T0),
      renewTime: micro(T0 + 900),
      leaseTransitions: 0,
    });
  });

  it.each([
    {
      what: 'with its acquireTime',
      found: { acquireTime: micro(T0 - 60_000), leaseTransitions: 7 },
      acquireTime: micro(T0 - 60_000),
      leaseTransitions: 7,
    },
    // A lease written without acquireTime gets one now.
    {
      what: 'without acquireTime',
      found: { leaseTransitions: 7 },
      acquireTime: micro(T0),
      leaseTransitions: 7,
    },
    { what: 'without leaseTransitions', found: {}, acquireTime: micro(T0), leaseTransitions: 0 },
  ])(
    'a replica that finds a live lease naming itself ($what, as after a restart) leads by renewing it',
    async (t) => {
      store.put({
        holderIdentity: 'pod-a',
        leaseDurationSeconds: 15,
        renewTime: micro(T0 - 1_000),
        ...t.found,
      });
      const a = start();
      await settle();
      expect(a.changes).toEqual([true]);
      expect(a.leadership()).toEqual([became('renewed')]);
      expect(store.spec()).toEqual({
        holderIdentity: 'pod-a',
        leaseDurationSeconds: 1,
        acquireTime: t.acquireTime,
        renewTime: micro(T0),
        leaseTransitions: t.leaseTransitions,
      });
    },
  );
});

describe("another replica's lease", () => {
  const live = { holderIdentity: 'pod-b', leaseDurationSeconds: 15, leaseTransitions: 2 };
  it.each([
    { what: 'renewed a second ago', spec: { ...live, renewTime: micro(T0 - 1_000) } },
    // Expired means renewTime + duration < now: at exactly renewTime + duration it is still held.
    { what: 'expiring this very millisecond', spec: { ...live, renewTime: micro(T0 - 15_000) } },
  ])('is left alone while it lives ($what): no write, and the holder is reported', async (t) => {
    store.put(t.spec);
    const a = start();
    await settle();
    expect(store.sent.map((r) => r.method ?? 'GET')).toEqual(['GET']);
    expect(a.changes).toEqual([]);
    expect(a.elector.describe()).toEqual({
      lease: 'routability/audit',
      identity: 'pod-a',
      leader: false,
      holder: 'pod-b',
    });
  });

  it.each([
    {
      what: 'expired a millisecond ago',
      spec: { ...live, renewTime: micro(T0 - 15_001) },
      from: 'pod-b',
      leaseTransitions: 3,
    },
    {
      what: 'released (holder empty), however fresh',
      spec: { ...live, holderIdentity: '', leaseDurationSeconds: 1, renewTime: micro(T0) },
      from: 'nobody',
      leaseTransitions: 3,
    },
    {
      what: 'without a holder',
      spec: { leaseDurationSeconds: 15, renewTime: micro(T0), leaseTransitions: 2 },
      from: 'nobody',
      leaseTransitions: 3,
    },
    // Fields of the wrong type read as absent.
    {
      what: 'whose holder is not a string',
      spec: { ...live, holderIdentity: 42, renewTime: micro(T0) },
      from: 'nobody',
      leaseTransitions: 3,
    },
    {
      what: 'whose duration is not a number (none: expired once renewTime has passed)',
      spec: { ...live, leaseDurationSeconds: '3600', renewTime: micro(T0 - 1) },
      from: 'pod-b',
      leaseTransitions: 3,
    },
    {
      what: 'whose leaseTransitions is not a number (counted from 0)',
      spec: { ...live, leaseTransitions: '2', renewTime: micro(T0 - 20_000) },
      from: 'pod-b',
      leaseTransitions: 1,
    },
    {
      what: 'without renewTime',
      spec: { ...live, renewTime: undefined },
      from: 'pod-b',
      leaseTransitions: 3,
    },
    {
      what: 'whose renewTime is not a time',
      spec: { ...live, renewTime: 'yesterday' },
      from: 'pod-b',
      leaseTransitions: 3,
    },
  ])('is taken over at once when $what', async (t) => {
    store.put(t.spec);
    const a = start();
    await settle();
    expect(a.changes).toEqual([true]);
    expect(a.leadership()).toEqual([became(`took over an expired lease from ${t.from}`)]);
    expect(store.spec()).toEqual({
      holderIdentity: 'pod-a',
      leaseDurationSeconds: 1,
      acquireTime: micro(T0),
      renewTime: micro(T0),
      leaseTransitions: t.leaseTransitions,
    });
  });

  it('a leader that finds the lease renewed by another replica steps down, naming the holder', async () => {
    const a = await leader();
    store.put({ holderIdentity: 'pod-b', leaseDurationSeconds: 15, renewTime: micro(T0 + 100) });
    await vi.advanceTimersByTimeAsync(300);
    expect(a.changes).toEqual([true, false]);
    expect(a.leadership().at(-1)).toEqual(steppedDown('held by pod-b'));
    expect(a.elector.describe()).toMatchObject({ leader: false, holder: 'pod-b' });
  });
});

describe('write conflicts', () => {
  it('a replica whose takeover is refused (409: another replica wrote first) follows, without an error', async () => {
    store.put({ holderIdentity: 'pod-b', leaseDurationSeconds: 1, renewTime: micro(T0 - 5_000) });
    store.failWith(apiError(409), 'PUT');
    const a = start();
    await settle();
    expect(store.sent.map((r) => r.method ?? 'GET')).toEqual(['GET', 'PUT']);
    expect(a.changes).toEqual([]);
    // No lastError: losing a race is how the protocol works, not a failure.
    expect(a.elector.describe()).toEqual({
      lease: 'routability/audit',
      identity: 'pod-a',
      leader: false,
      holder: 'pod-b',
    });
  });

  it('a leader whose renewal is refused (409: the lease changed since it was read) steps down at once', async () => {
    const a = await leader();
    store.failWith(apiError(409), 'PUT');
    await vi.advanceTimersByTimeAsync(300);
    expect(a.changes).toEqual([true, false]);
    expect(a.lastWhy()).toBe('lost a race for the lease');
    expect(a.elector.describe()).not.toHaveProperty('lastError');
  });

  it('a replica whose create is refused (409: another replica created the lease first) follows, without an error', async () => {
    store.failWith(apiError(409), 'POST');
    const a = start();
    await settle();
    expect(a.changes).toEqual([]);
    expect(a.elector.describe()).toEqual({
      lease: 'routability/audit',
      identity: 'pod-a',
      leader: false,
      holder: null,
    });
  });

  it('a leader whose lease was deleted and re-created by another replica first steps down', async () => {
    const a = await leader();
    store.stored = undefined;
    store.failWith(apiError(409), 'POST');
    await vi.advanceTimersByTimeAsync(300);
    expect(a.changes).toEqual([true, false]);
    expect(a.lastWhy()).toBe('another replica created the lease');
  });

  it('a renewal the API server fails (500) is an error: the leader keeps leading for now and shows it', async () => {
    const a = await leader();
    store.failWith(apiError(500), 'PUT');
    await vi.advanceTimersByTimeAsync(300);
    expect(a.changes).toEqual([true]);
    expect(a.elector.describe()).toEqual({
      lease: 'routability/audit',
      identity: 'pod-a',
      leader: true,
      holder: 'pod-a',
      lastError: 'HTTP 500 (the API server failed)',
    });
    // The next round that goes through clears it.
    store.fault = undefined;
    await vi.advanceTimersByTimeAsync(300);
    expect(a.elector.describe()).not.toHaveProperty('lastError');
  });
});

describe('stepping down when renewals fail', () => {
  it('isLeader answers by the clock: false from the renew deadline on, before any round or timer has run', async () => {
    // Lease 1 s, renewal every 300 ms: the renew deadline is 700 ms after the last renewal.
    const a = await leader();
    store.hang();
    skew = 699;
    expect(a.elector.isLeader()).toBe(true);
    skew = 700;
    expect(a.elector.isLeader()).toBe(false);
    expect(a.elector.describe()['leader']).toBe(false);
  });

  it.each([
    {
      what: 'gets no answer',
      fault: () => store.hang(),
      why: 'not renewed within 0.7 s: the renewal gets no answer',
    },
    {
      what: 'keeps failing',
      fault: () => store.failWith(apiError(500), 'PUT'),
      why: 'not renewed within 0.7 s: HTTP 500 (the API server failed)',
    },
  ])('a leader whose renewal $what steps down by timer at the renew deadline, and says why', async (t) => {
    const a = await leader();
    t.fault();
    await vi.advanceTimersByTimeAsync(699);
    expect(a.changes).toEqual([true]);
    await vi.advanceTimersByTimeAsync(1);
    expect(a.changes).toEqual([true, false]);
    expect(a.leadership().at(-1)).toEqual(steppedDown(t.why));
  });

  it.each([
    { skew: -1, changes: [true] },
    { skew: 0, changes: [true, false] },
  ])(
    'the step-down timer goes by the elector clock (clock $skew ms off the timer): it steps down only once that clock says so',
    async (t) => {
      const a = await leader();
      store.hang();
      skew = t.skew;
      await vi.advanceTimersByTimeAsync(700);
      expect(a.changes).toEqual(t.changes);
    },
  );

  it.each([
    { clockAt: 699, changes: [true] },
    { clockAt: 700, changes: [true, false] },
  ])(
    'a failed round steps the leader down once its clock is at the renew deadline (clock at +$clockAt ms)',
    async (t) => {
      const a = await leader();
      store.failWith(apiError(500), 'PUT');
      // The round at +300 ms of timer time (the step-down timer is due at +700 ms) reads the clock at +clockAt.
      skew = t.clockAt - 300;
      await vi.advanceTimersByTimeAsync(300);
      expect(a.changes).toEqual(t.changes);
      if (t.changes.length === 2)
        expect(a.leadership().at(-1)).toEqual(steppedDown('cannot renew: HTTP 500 (the API server failed)'));
    },
  );
  it('a slow renewal counts from when it was sent: the renewTime written, not the answer (else the leader acts after its lease expired for others)', async () => {
    // Lease 1 s, renewal every 300 ms: the renew deadline is 700 ms after the renewTime written.
    const a = await leader();
    store.slowOnce('PUT', 250);
    await vi.advanceTimersByTimeAsync(300);
    // The renewal of +300 ms is sent; its answer (a success) comes at +550 ms.
    expect(store.spec()?.['renewTime']).toBe(micro(T0));
    await vi.advanceTimersByTimeAsync(250);
    expect(store.spec()?.['renewTime']).toBe(micro(T0 + 300));
    expect(a.elector.describe()).not.toHaveProperty('lastError');
    store.hang();
    // Now at +550 ms: the elector's clock at +999 and +1,000 ms.
    skew = 449;
    expect(a.elector.isLeader()).toBe(true);
    skew = 450;
    expect(a.elector.isLeader()).toBe(false);
  });
});

describe('Retry-After', () => {
  it('skips rounds while the wait lasts, and resumes with the first round at which it has passed', async () => {
    await leader({ leaseDurationMs: 1_000, renewEveryMs: 250 });
    // The round at +250 ms is answered 429, Retry-After 1 s: quiet until +1,250 ms, when a round is due.
    store.failWith(apiError(429, '1'), 'GET', 1);
    await vi.advanceTimersByTimeAsync(250);
    const throttled = store.sent.length;
    await vi.advanceTimersByTimeAsync(750);
    expect(store.sent.length).toBe(throttled);
    await vi.advanceTimersByTimeAsync(250);
    expect(store.count('GET', T0 + 1_250)).toBe(1);
  });

  it('a later error without Retry-After does not cut short the wait the server asked for', async () => {
    await leader({ leaseDurationMs: 1_000, renewEveryMs: 250 });
    // The read at +250 ms hangs, so the rounds due at +500 and +750 ms queue behind it.
    store.hang('GET');
    await vi.advanceTimersByTimeAsync(800);
    // The hung read is answered 429 with Retry-After 10 s; the queued rounds then fail with 500.
    store.failWith(apiError(500));
    store.releaseHeld(apiError(429, '10'));
    await settle();
    const before = store.sent.length;
    expect(store.count('GET', T0 + 800)).toBe(2);
    // Quiet until +10.8 s: the rounds due until then are skipped; the one at +11 s goes.
    await vi.advanceTimersByTimeAsync(10_750 - 800);
    expect(store.sent.length).toBe(before);
    await vi.advanceTimersByTimeAsync(250);
    expect(store.count('GET', T0 + 11_000)).toBe(1);
  });
});

describe('stop()', () => {
  it('a leader hands the lease back (holder empty, 1 s, the rest as it was) under the version it read, and says it stopped', async () => {
    const a = await leader();
    await vi.advanceTimersByTimeAsync(300);
    const renewed = store.stored!;
    const sentBefore = store.sent.length;
    await a.elector.stop();
    const released = {
      ...renewed,
      spec: {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: micro(T0),
        renewTime: micro(T0 + 300),
        leaseTransitions: 0,
      },
    };
    expect(store.sent.slice(sentBefore)).toEqual([
      { path: PATH, timeoutMs: 300, at: T0 + 300 },
      { method: 'PUT', path: PATH, timeoutMs: 300, at: T0 + 300, body: released },
    ]);
    expect(store.spec()).toEqual(released.spec);
    expect(a.changes).toEqual([true, false]);
    expect(a.leadership().at(-1)).toEqual(steppedDown('stopped'));
    expect(a.elector.isLeader()).toBe(false);
    // Nothing keeps running: no renewal interval, no step-down timer.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a leader whose lease another replica has meanwhile taken leaves that lease alone', async () => {
    const a = await leader();
    store.put({ holderIdentity: 'pod-b', leaseDurationSeconds: 15, renewTime: micro(T0 + 100) });
    const taken = store.stored;
    const sentBefore = store.sent.length;
    await a.elector.stop();
    expect(store.sent.slice(sentBefore).map((r) => r.method ?? 'GET')).toEqual(['GET']);
    expect(store.stored).toBe(taken);
    expect(a.changes).toEqual([true, false]);
    expect(a.lastWhy()).toBe('stopped');
  });

  it('a follower sends no request when stopped', async () => {
    store.put({ holderIdentity: 'pod-b', leaseDurationSeconds: 15, renewTime: micro(T0) });
    const a = start();
    await settle();
    const sentBefore = store.sent.length;
    await a.elector.stop();
    expect(store.sent.length).toBe(sentBefore);
    expect(a.changes).toEqual([]);
  });

  it('stopping twice at once releases the lease once', async () => {
    const a = await leader();
    const sentBefore = store.sent.length;
    await Promise.all([a.elector.stop(), a.elector.stop()]);
    expect(store.sent.slice(sentBefore).map((r) => r.method ?? 'GET')).toEqual(['GET', 'PUT']);
    expect(a.changes).toEqual([true, false]);
  });
});
