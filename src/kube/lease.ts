/**
 * Leader election over a coordination.k8s.io/v1 Lease, so that of the
 * webhook's replicas one runs the background audit. The protocol is the one
 * client-go's leaderelection package uses: the holder renews `renewTime`
 * every few seconds; anyone may take a lease whose renewTime is older than
 * its leaseDurationSeconds; every write carries the resourceVersion it read,
 * so of two replicas racing for an expired lease the API server lets one win
 * (409 Conflict for the other). A leader that cannot renew steps down when its
 * own lease would have expired, before anyone else can take it. An answer
 * with a Retry-After (429, 503) is honoured: no Lease request until it has
 * passed (at most 5 min), even if that costs the lead.
 */
import type { Logger } from 'pino';
import { asRecord, numberAt, own, stringAt, type JsonRecord } from '../json/record.js';
import type { KubeClient } from './client.js';
import { describeKubeError, httpStatusOf, retryAfterWait } from './errors.js';

export interface LeaseOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly name: string;
  /** This replica (the pod name). */
  readonly identity: string;
  readonly logger: Logger;
  /** Default 15 s, as controller-runtime. */
  readonly leaseDurationMs?: number;
  /** Default 5 s. */
  readonly renewEveryMs?: number;
  /** Called on every change of leadership (before the listeners of `onChange`). */
  readonly onChange?: (leader: boolean) => void;
  readonly now?: () => number;
}

/**
 * Whether this replica leads now, and when that changes: what the single-writer
 * work (the audit, the policy params) is handed, so that one Lease serves them all.
 */
export interface Leadership {
  isLeader(): boolean;
  /** Calls `listener` on every change of leadership; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

export interface LeaderElector extends Leadership {
  /** `namespace/name` of the Lease. */
  readonly lease: string;
  describe(): Readonly<Record<string, unknown>>;
  /** Stops renewing and, when leading, releases the lease so another replica takes over at once. */
  stop(): Promise<void>;
}

interface LeaseSpec {
  readonly holderIdentity?: string | undefined;
  readonly leaseDurationSeconds?: number | undefined;
  readonly acquireTime?: string | undefined;
  readonly renewTime?: string | undefined;
  readonly leaseTransitions?: number | undefined;
}

/** A Lease as read: the object as sent (written back whole) and its spec's fields. */
interface LeaseObject {
  readonly object: JsonRecord;
  readonly spec: LeaseSpec;
}

/** The answer read as a Lease; fields of the wrong type read as absent. */
function readLease(answer: unknown): LeaseObject {
  const object = asRecord(answer) ?? {};
  const spec = asRecord(own(object, 'spec'));
  return {
    object,
    spec: {
      holderIdentity: stringAt(spec, 'holderIdentity'),
      leaseDurationSeconds: numberAt(spec, 'leaseDurationSeconds'),
      acquireTime: stringAt(spec, 'acquireTime'),
      renewTime: stringAt(spec, 'renewTime'),
      leaseTransitions: numberAt(spec, 'leaseTransitions'),
    },
  };
}

/** RFC 3339 with microseconds, as MicroTime is written. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

function expired(lease: LeaseObject, now: number): boolean {
  const holder = lease.spec.holderIdentity;
  if (!holder) return true;
  const renewed = Date.parse(lease.spec.renewTime ?? '');
  const duration = (lease.spec.leaseDurationSeconds ?? 0) * 1000;
  return !Number.isFinite(renewed) || renewed + duration < now;
}

/**
 * The Lease's HTTP side: read it, create it, write it back with the
 * resourceVersion read (false on 409: another replica wrote first).
 */
class LeaseStore {
  private readonly collection: string;
  private readonly path: string;

  constructor(
    private readonly opts: LeaseOptions,
    private readonly timeoutMs: number,
  ) {
    this.collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(opts.namespace)}/leases`;
    this.path = `${this.collection}/${encodeURIComponent(opts.name)}`;
  }

  /** The Lease, or undefined when there is none yet. */
  async read(): Promise<LeaseObject | undefined> {
    try {
      return readLease(await this.opts.client.json({ path: this.path, timeoutMs: this.timeoutMs }));
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async write(method: 'POST' | 'PUT', body: JsonRecord): Promise<boolean> {
    try {
      const path = method === 'POST' ? this.collection : this.path;
      await this.opts.client.json({ method, path, body, timeoutMs: this.timeoutMs });
      return true;
    } catch (err) {
      if (httpStatusOf(err) === 409) return false;
      throw err;
    }
  }
}

/** One election round's result: whether this replica leads now, and why (for the log). */
interface Round {
  readonly leader: boolean;
  readonly why: string;
  readonly holder: string | undefined;
}

class Elector {
  leader = false;
  holder: string | undefined;
  lastError: string | undefined;
  /** No request before this (clock ms): the last answer's Retry-After. */
  quietUntil = 0;
  private lastRenew = 0;
  private deadline: NodeJS.Timeout | undefined;
  private readonly duration: number;
  private readonly every: number;
  private readonly now: () => number;
  readonly store: LeaseStore;

  constructor(private readonly opts: LeaseOptions) {
    this.duration = opts.leaseDurationMs ?? 15_000;
    this.every = opts.renewEveryMs ?? 5_000;
    this.now = opts.now ?? Date.now;
    this.store = new LeaseStore(opts, Math.min(this.every, 5_000));
  }

  get renewEveryMs(): number {
    return this.every;
  }

  /**
   * How long after its last renewal this replica still acts as leader: one
   * renewal period short of the lease's duration, so it has stopped before any
   * other replica can take the lease (controller-runtime's renew deadline).
   */
  private get renewDeadlineMs(): number {
    return this.duration - this.every;
  }

  /** Leading, and renewed within the renew deadline (a renewal hanging on the network does not extend it). */
  isLeader(): boolean {
    return this.leader && this.now() - this.lastRenew < this.renewDeadlineMs;
  }

  /** After a renewal: step down by clock at the renew deadline unless renewed again, whatever the requests do. */
  private renewed(t: number): void {
    this.lastRenew = t;
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => {
      if (this.leader && this.now() - this.lastRenew >= this.renewDeadlineMs)
        this.setLeader(
          false,
          `not renewed within ${this.renewDeadlineMs / 1000} s: ${this.lastError ?? 'the renewal gets no answer'}`,
        );
    }, this.renewDeadlineMs);
    this.deadline.unref();
  }

  stopDeadline(): void {
    clearTimeout(this.deadline);
  }

  setLeader(value: boolean, why: string): void {
    if (value === this.leader) return;
    this.leader = value;
    this.opts.logger.info(
      { lease: `${this.opts.namespace}/${this.opts.name}`, identity: this.opts.identity, why },
      value ? 'became leader' : 'no longer leader',
    );
    this.opts.onChange?.(value);
  }

  private spec(t: number, transitions: number, acquired: string): LeaseSpec {
    return {
      holderIdentity: this.opts.identity,
      leaseDurationSeconds: Math.ceil(this.duration / 1000),
      acquireTime: acquired,
      renewTime: microTime(t),
      leaseTransitions: transitions,
    };
  }

  /** No Lease yet: create it; of two replicas creating at once, one wins. */
  private async create(t: number): Promise<Round> {
    const created = await this.store.write('POST', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.opts.name, namespace: this.opts.namespace },
      spec: this.spec(t, 0, microTime(t)),
    });
    if (!created) return { leader: false, why: 'another replica created the lease', holder: this.holder };
    this.renewed(t);
    return { leader: true, why: 'created the lease', holder: this.opts.identity };
  }

  /** Our Lease: renew it; someone else's expired one: take it over. */
  private async renewOrTake(lease: LeaseObject, t: number): Promise<Round> {
    const previous = lease.spec.holderIdentity;
    const mine = previous === this.opts.identity;
    const transitions = (lease.spec.leaseTransitions ?? 0) + (mine ? 0 : 1);
    const acquired = mine ? (lease.spec.acquireTime ?? microTime(t)) : microTime(t);
    const ok = await this.store.write('PUT', { ...lease.object, spec: this.spec(t, transitions, acquired) });
    if (!ok) return { leader: false, why: 'lost a race for the lease', holder: previous };
    this.renewed(t);
    const why = mine ? 'renewed' : `took over an expired lease from ${previous || 'nobody'}`;
    return { leader: true, why, holder: this.opts.identity };
  }

  private async round(): Promise<Round> {
    const t = this.now();
    const lease = await this.store.read();
    if (!lease) return this.create(t);
    const holder = lease.spec.holderIdentity;
    if (holder !== this.opts.identity && !expired(lease, t))
      return { leader: false, why: `held by ${holder ?? 'nobody'}`, holder };
    return this.renewOrTake(lease, t);
  }

  async tick(): Promise<void> {
    try {
      const r = await this.round();
      this.holder = r.holder;
      this.setLeader(r.leader, r.why);
      this.lastError = undefined;
    } catch (err) {
      this.lastError = describeKubeError(err);
      const wait = retryAfterWait(err);
      if (wait > 0) this.quietUntil = this.now() + wait;
      // Step down before our lease could have expired in anyone else's eyes.
      if (this.leader && this.now() - this.lastRenew >= this.renewDeadlineMs)
        this.setLeader(false, `cannot renew: ${this.lastError}`);
    }
  }

  /** Leading: hand the lease back (holder empty, 1 s) so another replica takes over at once. */
  async release(): Promise<void> {
    if (!this.leader) return;
    try {
      const lease = await this.store.read();
      if (lease?.spec.holderIdentity === this.opts.identity)
        await this.store.write('PUT', {
          ...lease.object,
          spec: { ...asRecord(own(lease.object, 'spec')), holderIdentity: '', leaseDurationSeconds: 1 },
        });
    } catch {
      // Best effort: the lease expires by itself.
    }
    this.setLeader(false, 'stopped');
  }
}

export function startLeaderElector(opts: LeaseOptions): LeaderElector {
  const listeners = new Set<() => void>();
  const elector = new Elector({
    ...opts,
    onChange: (leader) => {
      opts.onChange?.(leader);
      for (const listener of [...listeners]) listener();
    },
  });
  let stopped = false;
  let running: Promise<void> = elector.tick();
  const timer = setInterval(() => {
    // The API server asked to wait (Retry-After): this round is skipped.
    if ((opts.now ?? Date.now)() < elector.quietUntil) return;
    running = running.then(() => elector.tick());
  }, elector.renewEveryMs);
  timer.unref();

  return {
    lease: `${opts.namespace}/${opts.name}`,
    isLeader: () => elector.isLeader(),
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    describe: () => ({
      lease: `${opts.namespace}/${opts.name}`,
      identity: opts.identity,
      leader: elector.isLeader(),
      holder: elector.holder ?? null,
      ...(elector.lastError ? { lastError: elector.lastError } : {}),
    }),
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await running;
      elector.stopDeadline();
      await elector.release();
    },
  };
}
