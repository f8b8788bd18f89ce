/**
 * Leader election over a coordination.k8s.io/v1 Lease, so that of the
 * webhook's replicas one runs the background audit. The protocol is the one
 * client-go's leaderelection package uses: the holder renews `renewTime`
 * every few seconds; anyone may take a lease whose renewTime is older than
 * its leaseDurationSeconds; every write carries the resourceVersion it read,
 * so of two replicas racing for an expired lease the API server lets one win
 * (409 Conflict for the other). A leader that cannot renew steps down when its
 * own lease would have expired, before anyone else can take it.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { describeKubeError, httpStatusOf } from './errors.js';
import { requestJson } from './raw-get.js';

export interface LeaseOptions {
  readonly kc: KubeConfig;
  readonly namespace: string;
  readonly name: string;
  /** This replica (the pod name). */
  readonly identity: string;
  readonly logger: Logger;
  /** Default 15 s, as controller-runtime. */
  readonly leaseDurationMs?: number;
  /** Default 5 s. */
  readonly renewEveryMs?: number;
  /** Called on every change of leadership. */
  readonly onChange?: (leader: boolean) => void;
  readonly now?: () => number;
}

export interface LeaderElector {
  isLeader(): boolean;
  describe(): Readonly<Record<string, unknown>>;
  /** Stops renewing and, when leading, releases the lease so another replica takes over at once. */
  stop(): Promise<void>;
}

interface LeaseObject {
  metadata: { name: string; namespace: string; resourceVersion?: string; [key: string]: unknown };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
  [key: string]: unknown;
}

/** RFC 3339 with microseconds, as MicroTime is written. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

function expired(lease: LeaseObject, now: number): boolean {
  const holder = lease.spec?.holderIdentity;
  if (!holder) return true;
  const renewed = Date.parse(lease.spec?.renewTime ?? '');
  const duration = (lease.spec?.leaseDurationSeconds ?? 0) * 1000;
  return !Number.isFinite(renewed) || renewed + duration < now;
}

export function startLeaderElector(opts: LeaseOptions): LeaderElector {
  const duration = opts.leaseDurationMs ?? 15_000;
  const every = opts.renewEveryMs ?? 5_000;
  const now = opts.now ?? Date.now;
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(opts.namespace)}/leases`;
  const path = `${collection}/${encodeURIComponent(opts.name)}`;
  const timeoutMs = Math.min(every, 5_000);
  let leader = false;
  let lastRenew = 0;
  let lastError: string | undefined;
  let holder: string | undefined;
  let stopped = false;

  const setLeader = (value: boolean, why: string): void => {
    if (value === leader) return;
    leader = value;
    opts.logger.info(
      { lease: `${opts.namespace}/${opts.name}`, identity: opts.identity, why },
      value ? 'became leader' : 'no longer leader',
    );
    opts.onChange?.(value);
  };

  const spec = (t: number, transitions: number, acquired: string) => ({
    holderIdentity: opts.identity,
    leaseDurationSeconds: Math.ceil(duration / 1000),
    acquireTime: acquired,
    renewTime: microTime(t),
    leaseTransitions: transitions,
  });

  const write = async (method: 'POST' | 'PUT', body: LeaseObject): Promise<boolean> => {
    try {
      await requestJson(opts.kc, method, method === 'POST' ? collection : path, { body, timeoutMs });
      return true;
    } catch (err) {
      if (httpStatusOf(err) === 409) return false; // another replica wrote first
      throw err;
    }
  };

  const attempt = async (): Promise<void> => {
    const t = now();
    let lease: LeaseObject | undefined;
    try {
      lease = (await requestJson(opts.kc, 'GET', path, { timeoutMs })) as LeaseObject;
    } catch (err) {
      if (httpStatusOf(err) !== 404) throw err;
    }
    if (!lease) {
      const created = await write('POST', {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: opts.name, namespace: opts.namespace },
        spec: spec(t, 0, microTime(t)),
      });
      holder = created ? opts.identity : holder;
      if (created) lastRenew = t;
      setLeader(created, created ? 'created the lease' : 'another replica created the lease');
      return;
    }
    holder = lease.spec?.holderIdentity;
    const mine = holder === opts.identity;
    if (!mine && !expired(lease, t)) {
      setLeader(false, `held by ${holder ?? 'nobody'}`);
      return;
    }
    const transitions = (lease.spec?.leaseTransitions ?? 0) + (mine ? 0 : 1);
    const acquired = mine ? (lease.spec?.acquireTime ?? microTime(t)) : microTime(t);
    const ok = await write('PUT', { ...lease, spec: spec(t, transitions, acquired) });
    if (ok) {
      holder = opts.identity;
      lastRenew = t;
    }
    setLeader(
      ok,
      ok
        ? mine
          ? 'renewed'
          : `took over an expired lease from ${holder ?? 'nobody'}`
        : 'lost a race for the lease',
    );
  };

  const tick = async (): Promise<void> => {
    try {
      await attempt();
      lastError = undefined;
    } catch (err) {
      lastError = describeKubeError(err);
      // Step down before our lease could have expired in anyone else's eyes.
      if (leader && now() - lastRenew >= duration - every) setLeader(false, `cannot renew: ${lastError}`);
    }
  };

  let running: Promise<void> = tick();
  const timer = setInterval(() => {
    running = running.then(tick);
  }, every);
  timer.unref();

  return {
    isLeader: () => leader,
    describe: () => ({
      lease: `${opts.namespace}/${opts.name}`,
      identity: opts.identity,
      leader,
      holder: holder ?? null,
      ...(lastError ? { lastError } : {}),
    }),
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await running;
      if (!leader) return;
      try {
        const lease = (await requestJson(opts.kc, 'GET', path, { timeoutMs })) as LeaseObject;
        if (lease.spec?.holderIdentity === opts.identity)
          await write('PUT', {
            ...lease,
            spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 },
          });
      } catch {
        // Best effort: the lease expires by itself.
      }
      setLeader(false, 'stopped');
    },
  };
}
