/**
 * Chooses the source of the service ranges, in DESIGN.md §2.1's order:
 * the --service-cidr flag; else the cluster's ServiceCIDR objects; else, only
 * with --dev, the embedded default. (The cluster watch lands with issue 3.)
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { DEV_SERVICE_CIDR, type ServeConfig } from '../config.js';
import { ServiceRanges } from '../rules/networks.js';
import { staticSources } from './static-source.js';
import type { ClusterSources } from './types.js';

export interface SelectDeps {
  readonly config: ServeConfig;
  readonly logger: Logger;
  readonly registry: Registry;
}

export async function selectClusterSources({ config, logger }: SelectDeps): Promise<ClusterSources> {
  if (config.serviceCidrs.length > 0) {
    const parsed = ServiceRanges.parse(config.serviceCidrs);
    if (!parsed.ok) throw new Error(parsed.error); // config.ts validated these already
    logger.info({ source: 'flag', ranges: parsed.ranges.key() }, 'service ranges from --service-cidr');
    return staticSources(parsed.ranges, 'flag --service-cidr');
  }
  if (config.dev) {
    const parsed = ServiceRanges.parse([DEV_SERVICE_CIDR]);
    if (!parsed.ok) throw new Error(parsed.error);
    logger.warn({ source: 'dev-default', ranges: DEV_SERVICE_CIDR }, 'service ranges: --dev embedded default');
    return staticSources(parsed.ranges, `--dev default ${DEV_SERVICE_CIDR}`);
  }
  return {
    ranges: {
      current: () => undefined,
      readiness: () => ({
        ready: false,
        reason: 'service ranges unknown: set --service-cidr (ROUTABILITY_WEBHOOK_SERVICE_CIDR)',
      }),
      describe: () => ({ source: 'none' }),
      close: async () => {},
    },
    allocatedIPs: undefined,
    close: async () => {},
  };
}
