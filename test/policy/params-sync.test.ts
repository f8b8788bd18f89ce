/**
 * serve keeps the policy's params ConfigMap equal to its service ranges
 * (`--policy-params`), against the fake API server: the built serve updates
 * it within seconds of a ServiceCIDR change; the sync (with the real Kubernetes
 * client) writes nothing when the data is already equal, retries a 403, 429
 * or 500 after a backoff (never before Retry-After), counts each failure, and
 * writes nothing while another replica holds the audit Lease.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { kubeClient, type KubeClient } from '../../src/kube/client.js';
import { loadKubeconfig } from '../../src/kube/kubeconfig.js';
import type { CurrentInputs } from '../../src/inputs/rule-inputs.js';
import { paramsData } from '../../src/policy/index.js';
import { startParamsSync, type ParamsSync } from '../../src/server/params-sync.js';
import type { ServiceRanges } from '../../src/rules/index.js';
import { FakeApiServer, serviceCidr } from '../cluster/fake-apiserver.js';
import { capturingLogger } from '../cluster/helpers.js';
import { context, ranges } from '../support/gateways.js';
import { startServeAgainstApi } from '../support/server-process.js';

const NS = 'grw';
const NAME = 'grw-params';
const PATH = `/api/v1/namespaces/${NS}/configmaps/${NAME}`;

/** The one ConfigMap, served by GET and changed by a JSON merge patch of `data`. */
class FakeConfigMap {
  data: Record<string, string> | undefined = undefined;
  /** performance.now() of every request, by method. */
  readonly gets: number[] = [];
  readonly patches: number[] = [];
  /** Content types of the patches. */
  readonly patchTypes: string[] = [];

  route = (req: IncomingMessage, res: ServerResponse, url: URL): boolean => {
    if (url.pathname !== PATH) return false;
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const object = () => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: NAME, namespace: NS },
      ...(this.data ? { data: this.data } : {}),
    });
    if (req.method === 'GET') {
      this.gets.push(performance.now());
      send(200, object());
      return true;
    }
    if (req.method === 'PATCH') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.patches.push(performance.now());
        this.patchTypes.push(String(req.headers['content-type']));
        const patch = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: Record<string, string> };
        this.data = { ...this.data, ...patch.data };
        send(200, object());
      });
      return true;
    }
    return false;
  };
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return performance.now() - start;
}

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
    cm = new FakeConfigMap();
    const inputs = inputsWith(ranges('10.96.0.0/16'));
    start({ inputs });
    await until(() => cm.patches.length === 1, 5_000, 'the first write');
    expect(cm.data).toEqual(paramsData(ranges('10.96.0.0/16')));
    expect(cm.patchTypes).toEqual(['application/merge-patch+json']);

    inputs.set(ranges('10.96.0.0/16', { cidr: '10.100.0.0/16', terminating: true }, 'fd00:10:96::/112'));
    const took = await until(() => cm.patches.length === 2, 5_000, 'the write after a change');
    expect(took).toBeLessThan(5_000);
    expect(cm.data).toEqual({
      serviceCIDRs: '10.96.0.0/16,10.100.0.0/16,fd00:10:96::/112',
      terminatingCIDRs: '10.100.0.0/16',
    });

    // The same ranges again (a watch relist): read, compared, not written.
    const gets = cm.gets.length;
    inputs.set(ranges('10.96.0.0/16', { cidr: '10.100.0.0/16', terminating: true }, 'fd00:10:96::/112'));
    await until(() => cm.gets.length > gets, 5_000, 'the read after an equal change');
    await new Promise((r) => setTimeout(r, 200));
    expect(cm.patches).toHaveLength(2);
    expect(counts).toEqual({ writes: 2, failures: 0 });
    expect(sync!.describe()).toMatchObject({ state: 'in step' });
  });

  it.each([403, 500])('retries a %i with a growing backoff and counts each failure', async (code) => {
    cm = new FakeConfigMap();
    fake.faults.add({ resource: 'configmaps', verbs: ['write'] }, { kind: 'status', code }, { count: 2 });
    const lines = start({ inputs: inputsWith(ranges('10.96.0.0/16')) });
    await until(() => cm.patches.length === 1, 10_000, 'the write after two failures');
    // The fake stores the PATCH when it arrives; the sync counts it once it has read the answer.
    await until(() => counts.writes === 1, 5_000, 'the write counted');
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
    cm = new FakeConfigMap();
    fake.faults.add(
      { resource: 'configmaps', verbs: ['write'] },
      { kind: 'status', code: 429, retryAfterSeconds: 1 },
      { count: 1 },
    );
    const inputs = inputsWith(ranges('10.96.0.0/16'));
    start({ inputs, backoff: { initialMs: 10, maxMs: 100 } });
    await until(() => counts.failures === 1, 5_000, 'the 429');
    inputs.set(ranges('10.97.0.0/16'));
    await until(() => cm.patches.length === 1, 5_000, 'the write after Retry-After');
    const writes = mine('PATCH');
    expect(writes).toHaveLength(2);
    expect(writes[1]! - writes[0]!).toBeGreaterThanOrEqual(990);
    expect(cm.data).toEqual(paramsData(ranges('10.97.0.0/16')));
  });

  it('writes nothing without the audit Lease, and writes once it holds it', async () => {
    cm = new FakeConfigMap();
    const leadership = leadershipOf(false);
    const inputs = inputsWith(ranges('10.96.0.0/16'));
    start({ inputs, leadership });
    inputs.set(ranges('10.97.0.0/16'));
    await new Promise((r) => setTimeout(r, 300));
    expect(mine()).toEqual([]);
    expect(sync!.describe()).toMatchObject({ state: expect.stringMatching(/not the audit leader/) });
    leadership.become(true);
    await until(() => cm.patches.length === 1, 5_000, 'the write as leader');
    expect(cm.data).toEqual(paramsData(ranges('10.97.0.0/16')));
  });
});

describe('serve --policy-params (the built server)', () => {
  let fake: FakeApiServer;
  const cm = new FakeConfigMap();
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    fake = await FakeApiServer.start();
    fake.addRoute(cm.route);
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    const serving = await startServeAgainstApi(fake.kubeconfigPath, {
      prefix: 'policy-params-',
      args: ['--policy-params', `${NS}/${NAME}`, '--no-check-allocated-ips', '--gep-revision', 'provisional'],
      env: { POD_NAMESPACE: NS, POD_NAME: 'replica-a' },
    });
    stop = serving.stop;
  });
  afterAll(async () => {
    await stop?.();
    await fake.close();
  });

  it('updates the params ConfigMap within seconds of a ServiceCIDR change', async () => {
    await until(() => cm.data?.['serviceCIDRs'] === '10.96.0.0/16', 20_000, 'the first write');
    fake.put('servicecidrs', serviceCidr('secondary', ['fd00:10:96::/112']));
    const took = await until(
      () => cm.data?.['serviceCIDRs'] === '10.96.0.0/16,fd00:10:96::/112',
      10_000,
      'the write after the ServiceCIDR change',
    );
    console.log(`params ConfigMap updated ${Math.round(took)} ms after the ServiceCIDR change`);
    expect(cm.data).toEqual(paramsData(ranges('10.96.0.0/16', 'fd00:10:96::/112')));
  });
});
