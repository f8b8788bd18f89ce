/**
 * The one place that chooses where the service ranges (and allocated IPs)
 * come from, in this order: the --service-cidr flag; else the cluster's
 * ServiceCIDR objects, watched live; else, only with --dev, the embedded
 * default (also when --dev ignored an unusable kubeconfig: dev-kubeconfig.ts). With --service-cidr and no explicit --check-allocated-ips nothing
 * of the cluster is used, and @kubernetes/client-node (whose import alone
 * takes 0.5–1.5 s on a 2-core node) is never loaded.
 */
import { flagSources } from './flag-source.js';
import { devDefaultSources } from './static-source.js';
import type { ClusterSources } from './types.js';

import type { SelectDeps } from './live-sources.js';

export type { SelectDeps } from './live-sources.js';

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
