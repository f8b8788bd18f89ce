/**
 * Allocated ClusterIPs from the cluster's IPAddress objects
 * (networking.k8s.io/v1), watched live. IPAddress objects are named by the
 * canonical IP, so a lookup is one map access in the informer's cache.
 */
import { NetworkingV1Api } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { parseIP } from '../rules/index.js';
import type { AllocatedIPs, IPAddressHolder } from '../rules/index.js';
import type { ClusterMetrics } from './metrics.js';
import { startResourceWatch, type BackoffOptions, type WatchHealth } from './watch.js';

export interface IPAddressObject extends KubernetesObject {
  spec?: {
    parentRef?: { group?: string; resource?: string; namespace?: string; name?: string } | undefined;
  };
}

/** The holder named by an IPAddress's parentRef; core-group parents have group "". */
export function holderFromIPAddress(obj: IPAddressObject | undefined): IPAddressHolder | undefined {
  const ref = obj?.spec?.parentRef;
  if (!ref || typeof ref.resource !== 'string' || typeof ref.name !== 'string') return undefined;
  return {
    group: ref.group ?? '',
    resource: ref.resource,
    namespace: ref.namespace ?? '',
    name: ref.name,
  };
}

/** Holders keyed by canonical IP (names re-canonicalised, in case a name is spelled differently). */
export function holdersFromIPAddresses(objects: readonly IPAddressObject[]): Map<string, IPAddressHolder> {
  const out = new Map<string, IPAddressHolder>();
  for (const obj of objects) {
    const name = obj.metadata?.name;
    const holder = holderFromIPAddress(obj);
    const ip = name ? parseIP(name) : undefined;
    if (ip && holder) out.set(ip.canonical, holder);
  }
  return out;
}

export function ipAddressLister(
  kc: KubeConfig,
): (version: string) => Promise<KubernetesListObject<IPAddressObject>> {
  const v1 = kc.makeApiClient(NetworkingV1Api);
  return async () => (await v1.listIPAddress()) as KubernetesListObject<IPAddressObject>;
}

export interface IPAddressWatch extends AllocatedIPs {
  /** Synced, or known to be absent (the rule is then skipped). */
  ready(): boolean;
  /** True once the IPAddress API answered 404: the rule is skipped. */
  absent(): boolean;
  health(): WatchHealth;
  close(): Promise<void>;
}

export interface IPAddressWatchOptions {
  readonly kc: KubeConfig;
  readonly logger: Logger;
  readonly metrics: ClusterMetrics;
  readonly backoff?: Partial<BackoffOptions>;
}

export function startIPAddressWatch(opts: IPAddressWatchOptions): IPAddressWatch {
  const watch = startResourceWatch<IPAddressObject>({
    kc: opts.kc,
    group: 'networking.k8s.io',
    resource: 'ipaddresses',
    versions: ['v1'],
    list: ipAddressLister(opts.kc),
    onChange: () => {},
    onAbsent: () =>
      opts.logger.warn(
        'the cluster serves no IPAddress API (networking.k8s.io/v1, Kubernetes 1.33+): the ClusterAddressAllocated rule is skipped',
      ),
    logger: opts.logger,
    metrics: opts.metrics,
    ...(opts.backoff ? { backoff: opts.backoff } : {}),
  });
  return {
    holderOf(canonicalIP: string): IPAddressHolder | undefined {
      return holderFromIPAddress(watch.get(canonicalIP));
    },
    ready: () => watch.objects() !== undefined || watch.state() === 'absent',
    absent: () => watch.state() === 'absent' && watch.objects() === undefined,
    health: () => watch.health(),
    close: () => watch.stop(),
  };
}
