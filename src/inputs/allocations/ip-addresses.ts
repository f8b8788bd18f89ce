/**
 * Allocated ClusterIPs from the cluster's IPAddress objects
 * (networking.k8s.io/v1, named by the canonical IP), looked up one address at
 * a time when the rules need one (ip-lookup.ts). Nothing here lists or
 * watches them: memory stays the same whatever the number of Services.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { KubeClient } from '../../kube/client.js';
import { ipAddressGetter } from './ip-get.js';
import {
  createAllocationLookup,
  DEFAULT_LOOKUP_OPTIONS,
  type AllocationLookup,
  type LookupOptions,
} from './ip-lookup.js';
import { allocationLookupMetrics } from './ip-lookup-metrics.js';

export interface AllocationLookupStart {
  /** The API server's client (its pool should hold `concurrency` sockets). */
  readonly client: KubeClient;
  readonly logger: Logger;
  /** Where the lookup metrics go; none registered without. */
  readonly registry?: Registry | undefined;
  readonly options?: Partial<LookupOptions> | undefined;
}

/** On-demand IPAddress lookups against the kubeconfig's cluster. */
export function startAllocationLookup(start: AllocationLookupStart): AllocationLookup {
  // The lookup's own signal ends a call at its deadline; the client's is a backstop a second later.
  const backstopMs = (start.options?.timeoutMs ?? DEFAULT_LOOKUP_OPTIONS.timeoutMs) + 1_000;
  return createAllocationLookup({
    get: ipAddressGetter(start.client, backstopMs),
    logger: start.logger,
    metrics: start.registry ? allocationLookupMetrics(start.registry) : undefined,
    options: start.options,
  });
}
