/**
 * The rig for the API-server fault tests (apiserver-faults.test.ts, and the
 * long version behind `npm run chaos`): the built `serve` against the fake
 * Kubernetes API server with every client on — the ServiceCIDR watch, the
 * Gateway CRD revision watch, allocated-IP lookups, the audit with its Lease —
 * under a steady load of reviews, each of which needs an allocated-IP lookup.
 * A fault is switched on for a while and off again; the rig records every
 * answer, readiness, the requests each client sent, and how long until the
 * server has caught up with what changed during the fault.
 */
import { Agent } from 'node:https';
import { GATEWAY_CRD_NAME } from '../../src/crd/patch.js';
import { DEFAULT_BACKOFF } from '../../src/kube/watch.js';
import { FakeApiServer, gateway, ipAddress, serviceCidr } from '../kit/fake-apiserver.js';
import { storedGatewayCrd } from '../kit/gateway-crd.js';
import { defaultGateway, gatewayReview } from '../kit/reviews.js';
import { startServeAgainstApi, type ServingAgainstApi } from '../kit/server-process.js';
import { post, reviewProblem } from '../kit/webhook-client.js';
import { httpGet } from '../kit/http.js';
import { sleep } from '../kit/eventually.js';

/** How long each fault lasts: short in CI, 60 s under `npm run chaos`. */
export const OUTAGE_MS = Number(process.env['CHAOS_OUTAGE_MS'] ?? '4000');

/** The API clients of serve, by the resource each one asks for. */
export const CLIENTS = ['servicecidrs', 'customresourcedefinitions', 'ipaddresses', 'gateways', 'leases'];

export interface ReviewRecord {
  readonly at: number;
  readonly ms: number;
  readonly status: number;
  /** What was wrong with the answer, if anything. */
  readonly problem?: string;
  readonly warnings: readonly string[];
}

export interface Verbose {
  readonly ready: boolean;
  readonly failing?: readonly string[];
  readonly detail: Record<string, Record<string, unknown>>;
}

export class Rig {
  readonly reviews: ReviewRecord[] = [];
  readonly notReady: { at: number; status: number }[] = [];
  private stopping = false;
  private reviewing = false;
  private loops: Promise<void>[] = [];
  private probe: Promise<void> | undefined;
  private n = 0;

  private constructor(
    readonly fake: FakeApiServer,
    readonly served: ServingAgainstApi,
  ) {}

  static async start(opts: { args?: string[] } = {}): Promise<Rig> {
    const fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('provisional'));
    fake.put(
      'ipaddresses',
      ipAddress('10.96.0.10', { resource: 'services', namespace: 'default', name: 'kubernetes' }),
    );
    for (let i = 0; i < 5; i++)
      fake.put(
        'gateways',
        gateway('apps', `gw-${i}`, {
          spec: [{ type: 'IPAddress', value: `10.96.1.${i}`, routability: 'Cluster' }],
        }),
      );
    let served: ServingAgainstApi;
    try {
      served = await startServeAgainstApi(fake.kubeconfigPath, {
        prefix: 'chaos-',
        args: ['--audit-interval', '10s', '--audit-lease', 'chaos', ...(opts.args ?? [])],
        env: { POD_NAMESPACE: 'chaos', POD_NAME: 'replica-a', ROUTABILITY_WEBHOOK_GEP_REVISION: '' },
      });
    } catch (err) {
      await fake.close();
      throw err;
    }
    return new Rig(fake, served);
  }

  get server() {
    return this.served.server;
  }

  async verbose(): Promise<Verbose> {
    return JSON.parse((await httpGet(this.server.healthPort, '/readyz?verbose')).body) as Verbose;
  }

  async metrics(): Promise<string> {
    return (await httpGet(this.server.healthPort, '/metrics')).body;
  }

  /** Ready, every watch synced, lookups answering, and the audit has led a pass. */
  async healthy(): Promise<boolean> {
    const v = await this.verbose();
    const ranges = v.detail['serviceRanges'] as {
      watch?: { state?: string };
      allocatedIPs?: { state?: string };
    };
    const revision = v.detail['gepRevision'] as { watch?: { state?: string } };
    return (
      v.ready &&
      ranges?.watch?.state === 'synced' &&
      revision?.watch?.state === 'synced' &&
      ranges?.allocatedIPs?.state === 'ok'
    );
  }

  /** Polls `probe` every 100 ms; the milliseconds it took, or throws after `ms`. */
  async until(probe: () => Promise<boolean> | boolean, what: string, ms = 30_000): Promise<number> {
    const started = performance.now();
    for (;;) {
      if (await probe()) return performance.now() - started;
      if (performance.now() - started > ms) throw new Error(`not within ${ms} ms: ${what}`);
      await sleep(100);
    }
  }

  /**
   * Reviews (two workers, one every ~20 ms each) until stopLoad(), and a
   * readiness probe every 100 ms from the first startLoad() until close().
   */
  startLoad(): void {
    this.reviewing = true;
    const agent = new Agent({ keepAlive: true, maxSockets: 2, ca: this.served.ca, servername: 'localhost' });
    const worker = async () => {
      while (this.reviewing && !this.stopping) {
        const uid = `chaos-${this.n++}`;
        // A free address in the service range, new each time (allocation cache misses): each review looks one up.
        const ip = `10.96.${2 + ((this.n >> 8) % 200)}.${this.n % 256}`;
        const body = JSON.stringify(
          gatewayReview({
            uid,
            object: defaultGateway([{ type: 'IPAddress', value: ip, routability: 'Cluster' }]),
          }),
        );
        const at = performance.now();
        try {
          const reply = await post({ agent, port: this.server.port, body, timeoutMs: 30_000 });
          const ms = performance.now() - at;
          const problem =
            reply.status === 200 ? reviewProblem(reply.body, uid) : `HTTP ${reply.status}: ${reply.body}`;
          const response =
            reply.status === 200
              ? (JSON.parse(reply.body) as { response: { allowed: boolean; warnings?: string[] } }).response
              : undefined;
          const notAllowed = response && !response.allowed ? `denied: ${reply.body}` : undefined;
          const p = problem ?? notAllowed;
          this.reviews.push({
            at,
            ms,
            status: reply.status,
            warnings: response?.warnings ?? [],
            ...(p ? { problem: p } : {}),
          });
        } catch (err) {
          this.reviews.push({
            at,
            ms: performance.now() - at,
            status: 0,
            problem: (err as Error).message,
            warnings: [],
          });
        }
        await sleep(20);
      }
    };
    const readiness = async () => {
      while (!this.stopping) {
        const r = await httpGet(this.server.healthPort, '/readyz').catch(() => ({ status: 0 }));
        if (r.status !== 200) this.notReady.push({ at: performance.now(), status: r.status });
        await sleep(100);
      }
    };
    this.loops = [worker(), worker()];
    this.probe ??= readiness();
  }

  /** The reviews stop (the readiness probe goes on). */
  async stopLoad(): Promise<void> {
    this.reviewing = false;
    await Promise.all(this.loops);
  }

  /**
   * Waits until the backoff of every client has reset, as a replica's has
   * after a while of health: the watches reset theirs once their current
   * list-and-watch has lived 10 s (src/kube/watch.ts), so until 10.5 s after
   * the last ServiceCIDR and CRD list. (The lookup probe resets on success,
   * the Lease and the audit keep no backoff.) Returns the milliseconds waited.
   */
  async rested(): Promise<number> {
    const lastList = Math.max(
      ...['servicecidrs', 'customresourcedefinitions'].map((resource) =>
        Math.max(
          0,
          ...this.fake.requests.filter((r) => r.resource === resource && r.verb === 'list').map((r) => r.at),
        ),
      ),
    );
    const wait = Math.max(0, lastList + DEFAULT_BACKOFF.resetAfterMs + 500 - performance.now());
    await sleep(wait);
    return Math.round(wait);
  }

  /** Requests each client sent since `since` (performance.now()). */
  requestsSince(since: number): Record<string, number> {
    return Object.fromEntries(CLIENTS.map((r) => [r, this.fake.count({ resource: r, since })]));
  }

  async close(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.loops, this.probe]).catch(() => {});
    await this.served.stop();
    await this.fake.close();
  }
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** What one fault did, for the assertion messages and docs/dev/reliability.md's table. */
export interface FaultFigures {
  readonly fault: string;
  readonly reviews: number;
  readonly failed: number;
  readonly unchecked: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly requests: Record<string, number>;
  readonly recoverMs: number;
  readonly rssMiB: number;
}

/**
 * Runs one fault: `on`, OUTAGE_MS of load, `off`, then waits until the
 * server has seen a ServiceCIDR added during the fault and is healthy again.
 */
export async function underFault(
  rig: Rig,
  fault: string,
  on: () => void | Promise<void>,
  off: () => void | Promise<void>,
): Promise<FaultFigures> {
  const extra = `fault-${rig.fake.count()}`;
  const first = rig.reviews.length;
  const started = performance.now();
  await on();
  await sleep(OUTAGE_MS / 2);
  // A change while the API server is sick: it must show once it is well again.
  rig.fake.put('servicecidrs', serviceCidr(extra, [`10.${100 + (rig.fake.count() % 100)}.0.0/16`]));
  await sleep(OUTAGE_MS / 2);
  const requests = rig.requestsSince(started);
  await off();
  const recoverMs = await rig.until(async () => {
    const v = await rig.verbose();
    const ranges = (v.detail['serviceRanges'] as { ranges?: string[] }).ranges ?? [];
    return ranges.length >= 2 && (await rig.healthy());
  }, `recovery after ${fault}`);
  rig.fake.remove('servicecidrs', extra);
  await rig.until(async () => {
    const v = await rig.verbose();
    return ((v.detail['serviceRanges'] as { ranges?: string[] }).ranges ?? []).length === 1;
  }, `the extra range gone after ${fault}`);
  const during = rig.reviews.slice(first);
  const statm = await rssMiB(rig.server.proc.pid!);
  return {
    fault,
    reviews: during.length,
    failed: during.filter((r) => r.problem !== undefined).length,
    unchecked: during.filter((r) => r.warnings.some((w) => w.includes('not checked'))).length,
    p99Ms: Math.round(
      percentile(
        during.map((r) => r.ms),
        99,
      ),
    ),
    maxMs: Math.round(Math.max(0, ...during.map((r) => r.ms))),
    requests,
    recoverMs: Math.round(recoverMs),
    rssMiB: statm,
  };
}

async function rssMiB(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? '0');
  return Math.round(kb / 1024);
}
