/**
 * The service ranges from the cluster's ServiceCIDR objects (networking.k8s.io
 * v1, else v1beta1), watched live. The rules get one ServiceRanges built per
 * change, never per request.
 */
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeClient } from '../../kube/client.js';
import {
  listResource,
  startResourceWatch,
  type BackoffOptions,
  type ResourceWatch,
} from '../../kube/watch.js';
import { ServiceRanges, type ServiceCidrInput } from '../../rules/index.js';
import type { ClusterMetrics } from './metrics.js';
import { changeListeners } from './changes.js';
import type { RangeSource } from './types.js';

export const SERVICE_CIDR_FLAG_HINT =
  'set --service-cidr (ROUTABILITY_WEBHOOK_SERVICE_CIDR) to the service range of the cluster';

/** The parts of a ServiceCIDR (v1 or v1beta1, typed or raw JSON) this module reads. */
export interface ServiceCIDRObject extends KubernetesObject {
  spec?: { cidrs?: readonly string[] | undefined };
  status?: { conditions?: readonly { type?: string; status?: string; reason?: string }[] | undefined };
}

/** Being deleted: a deletionTimestamp, or the Ready condition False with reason Terminating. */
function isTerminating(obj: ServiceCIDRObject): boolean {
  if (obj.metadata?.deletionTimestamp) return true;
  return (obj.status?.conditions ?? []).some(
    (c) => c.type === 'Ready' && c.status === 'False' && c.reason === 'Terminating',
  );
}

/** Every spec.cidrs entry of every object, sorted for a stable identity. */
function serviceCidrInputs(objects: readonly ServiceCIDRObject[]): ServiceCidrInput[] {
  const inputs: ServiceCidrInput[] = [];
  const sorted = [...objects].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  for (const obj of sorted) {
    const terminating = isTerminating(obj);
    for (const cidr of obj.spec?.cidrs ?? [])
      if (typeof cidr === 'string') inputs.push({ cidr, terminating });
  }
  return inputs;
}

/**
 * The union of the objects' CIDRs. A CIDR the apiserver accepted but this
 * parser refuses is left out and reported, rather than losing every range.
 */
export function rangesFromServiceCidrs(objects: readonly ServiceCIDRObject[]): {
  ranges: ServiceRanges;
  skipped: string[];
} {
  const kept: ServiceCidrInput[] = [];
  const skipped: string[] = [];
  for (const input of serviceCidrInputs(objects)) {
    const one = ServiceRanges.parse([input]);
    if (one.ok) kept.push(input);
    else skipped.push(one.error);
  }
  const all = ServiceRanges.parse(kept);
  return { ranges: all.ok ? all.ranges : ServiceRanges.empty, skipped };
}

/** One list of the ServiceCIDRs of one API version (v1, v1beta1), in the wire form. */
export function listServiceCidrs(
  client: KubeClient,
  version: string,
  timeoutMs: number,
): Promise<KubernetesListObject<ServiceCIDRObject>> {
  return listResource<ServiceCIDRObject>(client, {
    path: `/apis/networking.k8s.io/${version}/servicecidrs`,
    timeoutMs,
    what: `list ServiceCIDRs at ${client.server}`,
  });
}

export interface ServiceCidrWatchOptions {
  readonly client: KubeClient;
  /** Where the credentials came from and the server, for logs and /readyz. */
  readonly description: string;
  readonly logger: Logger;
  readonly metrics: ClusterMetrics;
  readonly backoff?: Partial<BackoffOptions>;
  /** Extra detail merged into describe() (e.g. the IPAddress watch). */
  readonly extraDetail?: () => Readonly<Record<string, unknown>>;
}

/** Why the ranges are not usable, from what the watch knows. */
function notReadyReason(
  watch: ResourceWatch<ServiceCIDRObject>,
  listed: boolean,
  description: string,
): string {
  const state = watch.state();
  if (state === 'stopped') return 'the ServiceCIDR watch is stopped';
  if (state === 'absent')
    return `the cluster serves no ServiceCIDR API (networking.k8s.io/v1 or v1beta1; Kubernetes 1.31+ needed): ${SERVICE_CIDR_FLAG_HINT}`;
  if (listed) return `the cluster has no ServiceCIDR objects: ${SERVICE_CIDR_FLAG_HINT}`;
  const error = watch.lastError();
  return `waiting for first list of ServiceCIDRs from ${description}${error ? ` (last attempt: ${error}; retrying)` : ''}`;
}

/** Turns each new list of ServiceCIDR objects into ranges: logs changes and skips, publishes metrics. */
function rangesTracker(opts: ServiceCidrWatchOptions) {
  const log = opts.logger;
  let ranges: ServiceRanges | undefined;
  let reportedSkips = '';
  const changes = changeListeners();
  const update = (watch: ResourceWatch<ServiceCIDRObject>): void => {
    const objects = watch.objects();
    if (!objects) return;
    const next = rangesFromServiceCidrs(objects);
    const skips = next.skipped.join('; ');
    if (skips !== '' && skips !== reportedSkips)
      log.warn({ skipped: next.skipped }, 'ServiceCIDR entries ignored');
    reportedSkips = skips;
    const before = ranges?.key();
    const after = next.ranges.key();
    if (before === after) return;
    ranges = next.ranges;
    opts.metrics.serviceRanges.reset();
    for (const r of next.ranges.all)
      opts.metrics.serviceRanges.set({ cidr: r.cidr, terminating: String(r.terminating) }, 1);
    log.info(
      {
        source: 'ServiceCIDR',
        apiVersion: watch.apiVersion(),
        old: before === undefined ? null : before || '(none)',
        new: after || '(none)',
        objects: objects.length,
      },
      before === undefined ? 'service ranges from the ServiceCIDR objects' : 'service ranges changed',
    );
    changes.emit();
  };
  return { update, ranges: () => ranges, onChange: changes.add };
}

export function startServiceCidrWatch(opts: ServiceCidrWatchOptions): RangeSource {
  const log = opts.logger;
  const tracker = rangesTracker(opts);
  const watch: ResourceWatch<ServiceCIDRObject> = startResourceWatch<ServiceCIDRObject>({
    client: opts.client,
    group: 'networking.k8s.io',
    resource: 'servicecidrs',
    versions: ['v1', 'v1beta1'],
    onChange: () => tracker.update(watch),
    onAbsent: () =>
      log.error(
        { server: opts.description },
        `the cluster serves no ServiceCIDR API (networking.k8s.io/v1 or v1beta1): ${SERVICE_CIDR_FLAG_HINT}`,
      ),
    logger: log,
    metrics: opts.metrics,
    ...(opts.backoff ? { backoff: opts.backoff } : {}),
  });

  const usable = (): ServiceRanges | undefined => {
    const ranges = tracker.ranges();
    return ranges && !ranges.isEmpty ? ranges : undefined;
  };

  return {
    current: usable,
    readiness: () =>
      usable()
        ? { ready: true }
        : { ready: false, reason: notReadyReason(watch, tracker.ranges() !== undefined, opts.description) },
    describe: () => {
      const ranges = tracker.ranges();
      return {
        source: 'cluster ServiceCIDR objects',
        cluster: opts.description,
        ranges: ranges?.all.filter((r) => !r.terminating).map((r) => r.cidr) ?? [],
        terminating: ranges?.all.filter((r) => r.terminating).map((r) => r.cidr) ?? [],
        watch: watch.health(),
        ...opts.extraDetail?.(),
      };
    },
    onChange: tracker.onChange,
    close: () => watch.stop(),
  };
}
