/**
 * The params sync (src/server/params-sync.ts) in process: against the fake API
 * server with the real Kubernetes client, it writes the ranges, writes nothing
 * when the data is already equal, retries a 403, 429 or 500 after a backoff
 * (never before Retry-After), counts each failure, writes nothing while another
 * replica holds the audit Lease, and puts back a ConfigMap edited by hand at
 * its next re-check; against a scripted client on vitest's clock, when each
 * re-check comes. test/server/params-sync-serve.test.ts runs the built serve.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { kubeClient, type KubeClient, type KubeRequest } from '../../src/kube/client.js';
import { loadKubeconfig } from '../../src/kube/kubeconfig.js';
import type { CurrentInputs } from '../../src/inputs/rule-inputs.js';
import { paramsData } from '../../src/policy/index.js';
import { retryDelay, startParamsSync, type ParamsSync } from '../../src/server/params-sync.js';
import { KubeApiError } from '../../src/kube/errors.js';
import type { ServiceRanges } from '../../src/rules/index.js';
import { FakeApiServer } from '../kit/fake-apiserver.js';
import { capturingLogger } from '../kit/helpers.js';
import { context, ranges } from '../kit/gateways.js';
import { FakeConfigMap } from './fake-configmap.js';
import { eventually, sleep } from '../kit/eventually.js';

const NS = 'grw';
const NAME = 'grw-params';
const PATH = `/api/v1/namespaces/${NS}/configmaps/${NAME}`;

/** Rule inputs whose ranges the test sets. */
function inputsWith(initial: ServiceRanges) {
  let current: ServiceRanges = initial;
  const listeners = new Set<() => void>();
  return {
    current: () => ({ ctx: context({ ranges: current }), revision: 'provisional' }) as CurrentInputs,
    onChange: (l: () => void) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    set(next: ServiceRanges) {
      current = next;
      for (const l of listeners) l();
    },
  };
}

function leadershipOf(leader: boolean) {
  const listeners = new Set<() => void>();
  return {
    leader,
    isLeader() {
      return this.leader;
    },
    onChange: (l: () => void) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    become(next: boolean) {
      this.leader = next;
      for (const l of listeners) l();
    },
  };
}

describe('the params sync against the fake API server', () => {
  let fake: FakeApiServer;
  let client: KubeClient;
  let sync: ParamsSync | undefined;
  let cm: FakeConfigMap;
  let since = 0;
  /** This test's requests for the ConfigMap (the fake records every test's). */
  const mine = (method?: string) =>
    fake.requests
      .filter((r) => r.at >= since && r.path === PATH && (method === undefined || r.method === method))
      .map((r) => r.at);
  /** This test's sync's counts: a sync stopped by the test before counts into its own object, not this one. */
  let counts = { writes: 0, failures: 0 };

  beforeAll(async () => {
    fake = await FakeApiServer.start();
    fake.addRoute((req, res, url) => cm.route(req, res, url));
    client = kubeClient(loadKubeconfig({ kubeconfig: fake.kubeconfigPath }).kc);
  });
  afterEach(() => {
    sync?.stop();
    sync = undefined;
    fake.faults.clearAll();
  });
  afterAll(async () => {
    client.close();
    await fake.close();
  });

  function start(
    over: Partial<Parameters<typeof startParamsSync>[0]> & { inputs: ReturnType<typeof inputsWith> },
  ) {
    since = performance.now();
    const { logger, lines } = capturingLogger();
    const own = { writes: 0, failures: 0 };
    counts = own;
    const metrics = { writes: { inc: () => own.writes++ }, failures: { inc: () => own.failures++ } };
    sync = startParamsSync({
      client,
      namespace: NS,
      name: NAME,
      logger,
      metrics,
      backoff: { initialMs: 100, maxMs: 1_000 },
      random: () => 1,
      ...over,
    });
    return lines;
  }

  it('writes the ranges, follows a change at once, and writes nothing when already equal', async () => {
    cm = new FakeConfigMap(NS, NAME);
    const inputs = inputsWith(ranges('10.96.0.0/16'));
    start({ inputs });
    await eventually(() => cm.patches.length === 1, 'the first write', 5_000);
    expect(cm.data).toEqual(paramsData(ranges('10.96.0.0/16')));
    expect(cm.patchTypes).toEqual(['application/merge-patch+json']);

    inputs.set(ranges('10.96.0.0/16', { cidr: '10.100.0.0/16', terminating: true }, 'fd00:10:96::/112'));
    const took = await eventually(() => cm.patches.length === 2, 'the write after a change', 5_000);
    expect(took).toBeLessThan(5_000);
    expect(cm.data).toEqual({
      serviceCIDRs: '10.96.0.0/16,10.100.0.0/16,fd00:10:96::/112',
      terminatingCIDRs: '10.100.0.0/16',
    });

    // The same ranges again (a watch relist): read, compared, not written.
    const gets = cm.gets.length;
    inputs.set(ranges('10.96.0.0/16', { cidr: '10.100.0.0/16', terminating: true }, 'fd00:10:96::/112'));
    await eventually(() => cm.gets.length > gets, 'the read after an equal change', 5_000);
    await sleep(200);
    expect(cm.patches).toHaveLength(2);
    expect(counts).toEqual({ writes: 2, failures: 0 });
    expect(sync!.describe()).toMatchObject({ state: 'in step' });
  });

  it.each([403, 500])('retries a %i with a growing backoff and counts each failure', async (code) => {
    cm = new FakeConfigMap(NS, NAME);
    fake.faults.add({ resource: 'configmaps', verbs: ['write'] }, { kind: 'status', code }, { count: 2 });
    const lines = start({ inputs: inputsWith(ranges('10.96.0.0/16')) });
    await eventually(() => cm.patches.length === 1, 'the write after two failures', 10_000);
    // The fake stores the PATCH when it arrives; the sync counts it once it has read the answer.
    await eventually(() => counts.writes === 1, 'the write counted', 5_000);
    const writes = mine('PATCH');
    expect(writes).toHaveLength(3);
    // random() = 1: the full backoff, 100 ms then 200 ms (timers never fire early).
    expect(writes[1]! - writes[0]!).toBeGreaterThanOrEqual(95);
    expect(writes[2]! - writes[1]!).toBeGreaterThanOrEqual(195);
    expect(counts).toEqual({ writes: 1, failures: 2 });
    const warned = lines.filter((l) => l.msg === 'cannot update the policy params; will retry');
    expect(warned.map((l) => l['status'])).toEqual([code, code]);
    expect(cm.data).toEqual(paramsData(ranges('10.96.0.0/16')));
  });

  it('waits for Retry-After on a 429, even when the ranges change meanwhile', async () => {
    cm = new FakeConfigMap(NS, NAME);
    fake.faults.add(
      { resource: 'configmaps', verbs: ['write'] },
      { kind: 'status', code: 429, retryAfterSeconds: 1 },
      { count: 1 },
    );
    const inputs = inputsWith(ranges('10.96.0.0/16'));
    start({ inputs, backoff: { initialMs: 10, maxMs: 100 } });
    await eventually(() => counts.failures === 1, 'the 429', 5_000);
    inputs.set(ranges('10.97.0.0/16'));
    await eventually(() => cm.patches.length === 1, 'the write after Retry-After', 5_000);
    const writes = mine('PATCH');
    expect(writes).toHaveLength(2);
    expect(writes[1]! - writes[0]!).toBeGreaterThanOrEqual(990);
    expect(cm.data).toEqual(paramsData(ranges('10.97.0.0/16')));
  });

  it('writes nothing without the audit Lease, and writes once it holds it', async () => {
    cm = new FakeConfigMap(NS, NAME);
    const leadership = leadershipOf(false);
    const inputs = inputsWith(ranges('10.96.0.0/16'));
    start({ inputs, leadership });
    inputs.set(ranges('10.97.0.0/16'));
    await sleep(300);
    expect(mine()).toEqual([]);
    expect(sync!.describe()).toMatchObject({ state: expect.stringMatching(/not the audit leader/) });
    leadership.become(true);
    await eventually(() => cm.patches.length === 1, 'the write as leader', 5_000);
    expect(cm.data).toEqual(paramsData(ranges('10.97.0.0/16')));
  });

  it('puts a ConfigMap edited by hand back at its next re-check, and reads it again while in step', async () => {
    cm = new FakeConfigMap(NS, NAME);
    start({ inputs: inputsWith(ranges('10.96.0.0/16')), resyncMs: 150 });
    await eventually(() => counts.writes === 1, 'the first write', 5_000);
    const gets = cm.gets.length;
    await eventually(() => cm.gets.length >= gets + 2, 'two re-checks while in step', 5_000);
    expect(cm.patches).toHaveLength(1);
    // Edited by hand (or an old copy applied again): nothing else tells the sync.
    cm.data = { serviceCIDRs: '10.0.0.0/8', terminatingCIDRs: '' };
    await eventually(() => counts.writes === 2, 'the write after the hand edit', 5_000);
    expect(cm.data).toEqual(paramsData(ranges('10.96.0.0/16')));
    expect(sync!.describe()).toEqual({
      configMap: `${NS}/${NAME}`,
      state: 'in step',
      data: paramsData(ranges('10.96.0.0/16')),
    });
  });
});

describe("the re-check while in step (a scripted client, vitest's clock)", () => {
  type Data = Record<string, string>;
  /** The ConfigMap behind a scripted client: what each request was, and the data stored. */
  function scripted() {
    const store = { data: undefined as Data | undefined, sent: [] as string[] };
    const json = (req: KubeRequest): Promise<unknown> => {
      store.sent.push(req.method ?? 'GET');
      if (req.method === 'PATCH') store.data = { ...store.data, ...(req.body as { data: Data }).data };
      return Promise.resolve({ apiVersion: 'v1', kind: 'ConfigMap', data: store.data });
    };
    return { store, client: { json } as unknown as Pick<KubeClient, 'json'> };
  }
  const metrics = { writes: { inc: () => undefined }, failures: { inc: () => undefined } };
  let running: ParamsSync | undefined;
  afterEach(() => {
    running?.stop();
    running = undefined;
    vi.useRealTimers();
  });

  function startScripted(resyncMs?: number) {
    vi.useFakeTimers();
    const { store, client } = scripted();
    const inputs = inputsWith(ranges('10.96.0.0/16'));
    running = startParamsSync({
      client,
      namespace: NS,
      name: NAME,
      inputs,
      logger: capturingLogger().logger,
      metrics,
      ...(resyncMs === undefined ? {} : { resyncMs }),
    });
    return store;
  }

  it.each([
    { what: 'resyncMs', resyncMs: 60_000, every: 60_000 },
    { what: 'by default 5 min', resyncMs: undefined, every: 300_000 },
  ])('reads the ConfigMap again every $what, and writes back data changed meanwhile', async (t) => {
    const store = startScripted(t.resyncMs);
    await vi.advanceTimersByTimeAsync(0);
    expect(store.sent).toEqual(['GET', 'PATCH']);
    await vi.advanceTimersByTimeAsync(t.every - 1);
    expect(store.sent).toEqual(['GET', 'PATCH']);
    await vi.advanceTimersByTimeAsync(1);
    expect(store.sent).toEqual(['GET', 'PATCH', 'GET']);
    store.data = { serviceCIDRs: '10.0.0.0/8', terminatingCIDRs: '' };
    await vi.advanceTimersByTimeAsync(t.every);
    expect(store.sent).toEqual(['GET', 'PATCH', 'GET', 'GET', 'PATCH']);
    expect(store.data).toEqual(paramsData(ranges('10.96.0.0/16')));
  });

  it('after stop, no re-check comes', async () => {
    const store = startScripted(1_000);
    await vi.advanceTimersByTimeAsync(0);
    running!.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(store.sent).toEqual(['GET', 'PATCH']);
  });
});

describe('retryDelay', () => {
  const backoff = { initialMs: 100, maxMs: 1_000 };
  const apiError = (retryAfter?: string) =>
    new KubeApiError({ statusCode: 429, body: '', what: 'PATCH', retryAfter, now: 0 });
  it.each([
    { failures: 0, random: 1, err: new Error('x'), ms: 100 },
    { failures: 1, random: 1, err: new Error('x'), ms: 100 },
    { failures: 2, random: 1, err: new Error('x'), ms: 200 },
    { failures: 4, random: 1, err: new Error('x'), ms: 800 },
    { failures: 5, random: 1, err: new Error('x'), ms: 1_000 },
    { failures: 30, random: 1, err: new Error('x'), ms: 1_000 },
    { failures: 3, random: 0, err: new Error('x'), ms: 200 },
    { failures: 3, random: 0.5, err: new Error('x'), ms: 300 },
    { failures: 3, random: 0.5, err: apiError('2'), ms: 2_000 },
    { failures: 3, random: 1, err: apiError(), ms: 400 },
    { failures: 5, random: 1, err: apiError('0'), ms: 1_000 },
  ])('after $failures failures, random $random, $err.message: $ms ms', (t) => {
    expect(retryDelay(t.failures, t.err, backoff, () => t.random)).toBe(t.ms);
  });
});

describe("one round at a time, and what it says (a scripted client, vitest's clock)", () => {
  /** A client whose answers the test gives: each request waits for `answer()`. */
  function heldClient() {
    const waiting: { req: KubeRequest; settle: (answer: unknown, err?: Error) => void }[] = [];
    const json = (req: KubeRequest) =>
      new Promise((resolve, reject) =>
        waiting.push({ req, settle: (answer, err) => (err ? reject(err) : resolve(answer)) }),
      );
    return { waiting, client: { json } as unknown as Pick<KubeClient, 'json'> };
  }
  let sync: ParamsSync | undefined;
  afterEach(() => {
    sync?.stop();
    sync = undefined;
    vi.useRealTimers();
  });

  function begin(over: Partial<Parameters<typeof startParamsSync>[0]> = {}) {
    vi.useFakeTimers();
    const held = heldClient();
    const { logger, lines } = capturingLogger();
    const inputs = inputsWith(ranges('10.96.0.0/16'));
    const counts = { writes: 0, failures: 0 };
    sync = startParamsSync({
      client: held.client,
      namespace: NS,
      name: NAME,
      inputs,
      logger,
      metrics: { writes: { inc: () => counts.writes++ }, failures: { inc: () => counts.failures++ } },
      random: () => 1,
      ...over,
    });
    return { ...held, lines, inputs, counts };
  }
  const WANT = paramsData(ranges('10.96.0.0/16'));

  it('starting until the first round ends; changes meanwhile run one more round after it, not one each', async () => {
    const t = begin();
    expect(t.waiting.map((w) => w.req.method ?? 'GET')).toEqual(['GET']);
    expect(sync!.describe()).toEqual({ configMap: `${NS}/${NAME}`, state: 'starting' });
    t.inputs.set(ranges('10.97.0.0/16'));
    t.inputs.set(ranges('10.98.0.0/16'));
    await vi.advanceTimersByTimeAsync(0);
    expect(t.waiting).toHaveLength(1);
    // The round that started before the changes compares with the ranges it read then.
    t.waiting[0]!.settle({ data: WANT });
    await vi.advanceTimersByTimeAsync(0);
    // One more round for both changes, reading again: in step already, so no write.
    expect(t.waiting.map((w) => w.req.method ?? 'GET')).toEqual(['GET', 'GET']);
    t.waiting[1]!.settle({ data: paramsData(ranges('10.98.0.0/16')) });
    await vi.advanceTimersByTimeAsync(0);
    expect(t.waiting).toHaveLength(2);
    expect(t.counts).toEqual({ writes: 0, failures: 0 });
  });

  it.each([
    { what: 'an answer without data', answer: { kind: 'ConfigMap' } },
    { what: 'an answer that is null', answer: null },
    { what: 'data that is null', answer: { data: null } },
    { what: 'data that is not an object', answer: { data: 'x' } },
    { what: 'one key more', answer: { data: { ...WANT, extra: 'x' } } },
    { what: 'one key less', answer: { data: { serviceCIDRs: WANT['serviceCIDRs'] } } },
    { what: 'a value that differs', answer: { data: { ...WANT, serviceCIDRs: '10.0.0.0/8' } } },
  ])('writes after $what, says so with the data, and is in step', async (t) => {
    const s = begin();
    s.waiting[0]!.settle(t.answer);
    await vi.advanceTimersByTimeAsync(0);
    expect(s.waiting[1]?.req).toMatchObject({
      method: 'PATCH',
      path: `/api/v1/namespaces/${NS}/configmaps/${NAME}`,
      body: { data: WANT },
      contentType: 'application/merge-patch+json',
      timeoutMs: 10_000,
    });
    s.waiting[1]!.settle({});
    await vi.advanceTimersByTimeAsync(0);
    expect(s.counts).toEqual({ writes: 1, failures: 0 });
    expect(sync!.describe()).toEqual({ configMap: `${NS}/${NAME}`, state: 'in step', data: WANT });
    expect(s.lines.filter((l) => l.msg === 'policy params updated')).toEqual([
      expect.objectContaining({
        level: 30,
        component: 'policy-params',
        configMap: `${NS}/${NAME}`,
        data: WANT,
      }),
    ]);
  });

  it('a failure: counted, said with its status, error and wait, shown as failing; retried after the backoff (1 s by default)', async () => {
    const s = begin({ timeoutMs: 3_000 });
    expect(s.waiting[0]!.req).toMatchObject({ timeoutMs: 3_000 });
    s.waiting[0]!.settle(undefined, new KubeApiError({ statusCode: 403, body: '', what: 'GET' }));
    await vi.advanceTimersByTimeAsync(0);
    expect(s.counts).toEqual({ writes: 0, failures: 1 });
    expect(sync!.describe()).toEqual({
      configMap: `${NS}/${NAME}`,
      state: 'failing',
      failures: 1,
      lastError: 'HTTP 403 (forbidden: the service account lacks permission)',
    });
    expect(s.lines.filter((l) => l.msg === 'cannot update the policy params; will retry')).toEqual([
      expect.objectContaining({
        level: 40,
        status: 403,
        error: 'HTTP 403 (forbidden: the service account lacks permission)',
        retryInMs: 1_000,
      }),
    ]);
    await vi.advanceTimersByTimeAsync(999);
    expect(s.waiting).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(s.waiting).toHaveLength(2);
  });

  it('with the ranges unknown: no request, and says so', async () => {
    vi.useFakeTimers();
    const held = heldClient();
    sync = startParamsSync({
      client: held.client,
      namespace: NS,
      name: NAME,
      inputs: { current: () => undefined, onChange: () => () => undefined },
      logger: capturingLogger().logger,
      metrics: { writes: { inc: () => undefined }, failures: { inc: () => undefined } },
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(held.waiting).toEqual([]);
    expect(sync.describe()).toEqual({ configMap: `${NS}/${NAME}`, state: 'service ranges unknown' });
  });

  it('stopped during a round: no re-check after it, and a change asks nothing', async () => {
    const s = begin({ resyncMs: 1_000 });
    sync!.stop();
    s.waiting[0]!.settle({ data: WANT });
    await vi.advanceTimersByTimeAsync(5_000);
    s.inputs.set(ranges('10.97.0.0/16'));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(s.waiting).toHaveLength(1);
  });
});
