/**
 * Service ranges from --service-cidr: no cluster, no watch. Kept apart from
 * select.ts so that `serve --service-cidr` never imports @kubernetes/client-node.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ServiceRanges } from '../rules/networks.js';
import { clusterMetrics } from './metrics.js';
import { staticSources } from './static-source.js';
import type { ClusterSources } from './types.js';

export const FLAG_SOURCE = 'flag --service-cidr';

/** Parses the flag's CIDRs (config.ts validated them), publishes them as metrics and logs the source. */
export function flagRanges(serviceCidrs: readonly string[], log: Logger, registry: Registry): ServiceRanges {
  const parsed = ServiceRanges.parse(serviceCidrs);
  if (!parsed.ok) throw new Error(parsed.error);
  const metrics = clusterMetrics(registry);
  for (const r of parsed.ranges.all) metrics.serviceRanges.set({ cidr: r.cidr, terminating: 'false' }, 1);
  log.info(
    { source: 'flag', ranges: parsed.ranges.key() },
    'service ranges from --service-cidr; no ServiceCIDR watch',
  );
  return parsed.ranges;
}

export function flagSources(
  serviceCidrs: readonly string[],
  log: Logger,
  registry: Registry,
): ClusterSources {
  return staticSources(flagRanges(serviceCidrs, log, registry), FLAG_SOURCE);
}
