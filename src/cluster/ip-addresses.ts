/**
 * Allocated ClusterIPs from the cluster's IPAddress objects
 * (networking.k8s.io/v1, named by the canonical IP), looked up one address at
 * a time when the rules need one (ip-lookup.ts). Nothing here lists or
 * watches them: memory stays the same whatever the number of Services.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { IPAddressHolder } from '../rules/index.js';
import { ipAddressGetter } from './ip-get.js';
import {
  createAllocationLookup,
  DEFAULT_LOOKUP_OPTIONS,
  type AllocationLookup,
  type LookupOptions,
} from './ip-lookup.js';
import { allocationLookupMetrics } from './ip-lookup-metrics.js';

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

export interface AllocationLookupStart {
  readonly kc: KubeConfig;
  readonly logger: Logger;
  /** Where the lookup metrics go; none registered without. */
  readonly registry?: Registry | undefined;
  readonly options?: Partial<LookupOptions> | undefined;
}

/** On-demand IPAddress lookups against the kubeconfig's cluster. */
export function startAllocationLookup(start: AllocationLookupStart): AllocationLookup {
  const concurrency = start.options?.concurrency ?? DEFAULT_LOOKUP_OPTIONS.concurrency;
  return createAllocationLookup({
    get: ipAddressGetter(start.kc, concurrency),
    logger: start.logger,
    metrics: start.registry ? allocationLookupMetrics(start.registry) : undefined,
    options: start.options,
  });
}
