/**
 * One job of the allocated-IP lookups (ip-lookup.ts): one GET of an address
 * within the lookup's deadline and a lookup slot, with every failure turned
 * into a result: the API server's few words for the warning and the detail for
 * the log, or the slot's refusal.
 */
import { describeKubeError } from '../../kube/errors.js';
import type { GetResult, IPAddressGetter } from './ip-get.js';
import type { AllocationLookupMetrics } from './ip-lookup-metrics.js';
import type { LookupSlots, Requester, SlotRefusal } from './ip-lookup-slots.js';

/** What a fetch needs of the lookup's dependencies. */
export interface FetchDeps {
  readonly get: IPAddressGetter;
  readonly metrics?: AllocationLookupMetrics | undefined;
}

/** What a GET gave, or why none was sent. */
export type Fetched =
  | GetResult
  | {
      readonly kind: 'refused';
      readonly why: SlotRefusal;
      readonly reason: string;
      /** A GET was sent (and cut off at the deadline): counted as a GET that failed. */
      readonly sent?: true;
    };

/**
 * One GET of an address, within the deadline and a lookup slot; never
 * rejects: every failure becomes an `error` outcome with a few words for the
 * warning and the detail for the log.
 */
export class LookupFetcher {
  readonly controllers = new Set<AbortController>();
  private readonly timeoutText: string;

  constructor(
    private readonly deps: FetchDeps,
    private readonly timeoutMs: number,
    private readonly slots: LookupSlots,
    private readonly now: () => number,
  ) {
    this.timeoutText = `no answer from the API server within ${timeoutMs / 1000} s`;
  }

  async fetch(name: string, countAs: 'lookup' | 'probe', requester: Requester): Promise<Fetched> {
    const controller = new AbortController();
    this.controllers.add(controller);
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    const started = this.now();
    let result: Fetched;
    try {
      result = await this.withSlot(name, controller.signal, requester);
    } finally {
      clearTimeout(timer);
      this.controllers.delete(controller);
    }
    this.deps.metrics?.duration.observe((this.now() - started) / 1000);
    // A lookup refused a slot sent nothing: it is counted as unchecked, not as a GET.
    if (result.kind !== 'refused' || result.sent)
      this.deps.metrics?.requests.inc({
        kind: countAs,
        result: result.kind === 'refused' ? 'error' : result.kind,
      });
    return result;
  }

  private async withSlot(name: string, signal: AbortSignal, requester: Requester): Promise<Fetched> {
    const slot = await this.slots.acquire(signal, requester);
    if (!slot.ok) return { kind: 'refused', why: slot.why, reason: this.refusalText(slot.why) };
    try {
      return await this.deps.get.get(name, signal);
    } catch (err) {
      if (!signal.aborted) return { kind: 'error', reason: unreachable(err), detail: describeKubeError(err) };
      // Cut off by a deadline mostly spent waiting for the slot: the queue's doing, not a sign that
      // the API server fails (lookups sent without waiting say that).
      if (slot.queued) return { kind: 'refused', why: 'slot-timeout', reason: this.timeoutText, sent: true };
      return { kind: 'error', reason: this.timeoutText, detail: `GET ipaddresses/${name} timed out` };
    } finally {
      this.slots.release();
    }
  }

  private refusalText(why: SlotRefusal): string {
    switch (why) {
      case 'slot-timeout':
        return this.timeoutText;
      case 'namespace-share':
        return 'too many allocated-IP lookups waiting for this namespace';
      case 'user-share':
        return 'too many allocated-IP lookups waiting for this user';
      case 'pushed-out':
        return "allocated-IP lookup gave way to other namespaces' lookups";
      case 'queue-full':
        return 'too many allocated-IP lookups waiting';
    }
  }
}

function unreachable(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? `API server unreachable (${code})` : 'API server unreachable';
}
