/**
 * The one place that chooses where the service ranges (and allocated IPs)
 * come from, in this order: the --service-cidr flag; else the cluster's
 * ServiceCIDR objects, watched live; else, only with --dev, the embedded
 * default (also when --dev ignored an unusable kubeconfig: dev-kubeconfig.ts). With --service-cidr and no explicit --check-allocated-ips nothing
 * of the cluster is used, and @kubernetes/client-node (whose import alone
 * takes 0.5–1.5 s on a 2-core node) is never loaded.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ServeConfig } from '../config/serve.js';
import { flagSources } from './flag-source.js';
import { devDefaultSources } from './static-source.js';
import type { KubeconfigOptions } from '../kube/kubeconfig.js';
import type { LookupOptions } from './ip-lookup.js';
import type { ClusterSources } from './types.js';
import type { BackoffOptions } from '../kube/watch.js';

export interface SelectDeps {
  readonly config: ServeConfig;
  readonly logger: Logger;
  readonly registry: Registry;
  /** Set when --dev ignored an unusable kubeconfig (devIgnoredKubeconfig): no cluster, and why. */
  readonly noCluster?: string | undefined;
  /** Where to look for credentials (tests); defaults to process.env and the home directory. */
  readonly kubeconfigOptions?: Omit<KubeconfigOptions, 'kubeconfig'>;
  /** Watch restart timing (tests); defaults to 0.5 s → 30 s. */
  readonly backoff?: Partial<BackoffOptions>;
  /** Allocated-IP lookup timing and cache size (tests, benchmarks); defaults in ip-lookup.ts. */
  readonly lookup?: Partial<LookupOptions>;
}

/** Returns at once: while the first list is on its way, readiness says so. */
export async function selectClusterSources(deps: SelectDeps): Promise<ClusterSources> {
  const { config, registry } = deps;
  const log = deps.logger.child({ component: 'cluster' });
  if (config.serviceRanges !== undefined && config.checkAllocatedIps !== true)
    return flagSources(config.serviceRanges, log, registry);
  if (deps.noCluster !== undefined)
    return config.serviceRanges !== undefined
      ? flagSources(config.serviceRanges, log, registry)
      : devDefaultSources(deps.noCluster);
  return (await import('./live-sources.js')).liveClusterSources(deps, log);
}
