/**
 * Service ranges from --service-cidr: no cluster, no watch. Kept apart from
 * select.ts so that `serve --service-cidr` never imports @kubernetes/client-node.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ServiceRanges } from '../../rules/index.js';
import { clusterMetrics } from './metrics.js';
import { staticSources } from './static-source.js';
import type { ClusterSources } from './types.js';

export const FLAG_SOURCE = 'flag --service-cidr';

/** Publishes the flag's ranges (parsed with the flags) as metrics and logs the source. */
export function flagRanges(ranges: ServiceRanges, log: Logger, registry: Registry): ServiceRanges {
  const metrics = clusterMetrics(registry);
  for (const r of ranges.all) metrics.serviceRanges.set({ cidr: r.cidr, terminating: 'false' }, 1);
  log.info(
    { source: 'flag', ranges: ranges.key() },
    'service ranges from --service-cidr; no ServiceCIDR watch',
  );
  return ranges;
}

export function flagSources(ranges: ServiceRanges, log: Logger, registry: Registry): ClusterSources {
  return staticSources(flagRanges(ranges, log, registry), FLAG_SOURCE);
}
