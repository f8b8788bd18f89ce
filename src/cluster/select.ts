/**
 * Chooses the source of the service ranges, in DESIGN.md §2.1's order: the
 * --service-cidr flag; else the cluster's ServiceCIDR objects, watched live;
 * else, only with --dev, the embedded default. Returns at once: while the
 * first list is on its way, readiness says so.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { DEV_SERVICE_CIDR, type ServeConfig } from '../config/serve.js';
import { ServiceRanges } from '../rules/index.js';
import { startIPAddressWatch, type IPAddressWatch } from './ip-addresses.js';
import {
  findKubeconfig,
  loadKubeconfig,
  NO_KUBECONFIG_REASON,
  oneLine,
  type KubeconfigOptions,
  type LoadedKubeconfig,
} from './kubeconfig.js';
import { flagRanges, FLAG_SOURCE } from './flag-source.js';
import { clusterMetrics, type ClusterMetrics } from './metrics.js';
import { SERVICE_CIDR_FLAG_HINT, startServiceCidrWatch } from './service-cidrs.js';
import { staticRangeSource, staticSources } from './static-source.js';
import type { ClusterSources, RangeSource } from './types.js';
import type { BackoffOptions } from './watch.js';

export interface SelectDeps {
  readonly config: ServeConfig;
  readonly logger: Logger;
  readonly registry: Registry;
  /** Where to look for credentials (tests); defaults to process.env and the home directory. */
  readonly kubeconfigOptions?: Omit<KubeconfigOptions, 'kubeconfig'>;
  /** Watch restart timing (tests); defaults to 0.5 s → 30 s. */
  readonly backoff?: Partial<BackoffOptions>;
}

function unavailable(reason: string, detail: Readonly<Record<string, unknown>>): ClusterSources {
  const ranges: RangeSource = {
    current: () => undefined,
    readiness: () => ({ ready: false, reason }),
    describe: () => ({ source: 'none', reason, ...detail }),
    close: async () => {},
  };
  return { ranges, allocatedIPs: undefined, close: async () => {} };
}

function fixed(value: string): ServiceRanges {
  const parsed = ServiceRanges.parse([value]);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.ranges;
}

function allocatedIPsOf(watch: IPAddressWatch | undefined): ClusterSources['allocatedIPs'] {
  if (!watch) return undefined;
  return { holderOf: (ip) => watch.holderOf(ip), ready: () => watch.ready() };
}

export async function selectClusterSources(deps: SelectDeps): Promise<ClusterSources> {
  const { config, logger, registry } = deps;
  const log = logger.child({ component: 'cluster' });
  const metrics = clusterMetrics(registry);
  const kubeconfigOptions: KubeconfigOptions = { ...deps.kubeconfigOptions, kubeconfig: config.kubeconfig };
  const backoff = deps.backoff ? { backoff: deps.backoff } : {};

  if (config.serviceRanges !== undefined) {
    const flagged = flagRanges(config.serviceRanges, log, registry);
    if (config.checkAllocatedIps !== true) return staticSources(flagged, FLAG_SOURCE);
    // Explicitly asked for: the IPAddress check can still use the cluster.
    const loaded = tryLoad(kubeconfigOptions, log);
    if (!loaded) {
      log.warn(
        '--check-allocated-ips: no usable Kubernetes credentials; the ClusterAddressAllocated rule is skipped',
      );
      return staticSources(flagged, FLAG_SOURCE);
    }
    const ips = startIPAddressWatch({ kc: loaded.kc, logger: log, metrics, ...backoff });
    const base = staticRangeSource(flagged, FLAG_SOURCE);
    const ranges: RangeSource = {
      ...base,
      describe: () => ({ ...base.describe(), allocatedIPs: ips.health() }),
    };
    return { ranges, allocatedIPs: allocatedIPsOf(ips), close: () => ips.close() };
  }

  const found = findKubeconfig(kubeconfigOptions);
  if (!found) {
    if (config.dev) {
      log.warn(
        { source: 'dev-default', ranges: DEV_SERVICE_CIDR },
        'no kubeconfig found; service ranges: --dev embedded default',
      );
      return staticSources(
        fixed(DEV_SERVICE_CIDR),
        `--dev default ${DEV_SERVICE_CIDR} (no kubeconfig found)`,
      );
    }
    const reason = `service ranges unknown: ${NO_KUBECONFIG_REASON}; ${SERVICE_CIDR_FLAG_HINT}, or --kubeconfig`;
    log.error(reason);
    return unavailable(reason, {});
  }

  let loaded: LoadedKubeconfig;
  try {
    loaded = loadKubeconfig(kubeconfigOptions);
  } catch (err) {
    const reason = `service ranges unknown: ${oneLine(err)}; ${SERVICE_CIDR_FLAG_HINT}`;
    if (config.dev) {
      log.warn(
        { err: oneLine(err), ranges: DEV_SERVICE_CIDR },
        'kubeconfig unusable; service ranges: --dev embedded default',
      );
      return staticSources(
        fixed(DEV_SERVICE_CIDR),
        `--dev default ${DEV_SERVICE_CIDR} (kubeconfig unusable)`,
      );
    }
    log.error(reason);
    return unavailable(reason, {});
  }

  return startClusterSources(loaded, config.checkAllocatedIps !== false, log, metrics, deps.backoff);
}

function tryLoad(options: KubeconfigOptions, log: Logger): LoadedKubeconfig | undefined {
  try {
    return loadKubeconfig(options);
  } catch (err) {
    log.warn({ err: oneLine(err) }, 'cannot load Kubernetes credentials');
    return undefined;
  }
}

/** Starts the ServiceCIDR watch (and the IPAddress watch when asked) against one cluster. */
export function startClusterSources(
  loaded: LoadedKubeconfig,
  checkAllocatedIps: boolean,
  log: Logger,
  metrics: ClusterMetrics,
  backoff?: Partial<BackoffOptions>,
): ClusterSources {
  const timing = backoff ? { backoff } : {};
  log.info(
    { source: 'ServiceCIDR', cluster: loaded.description, checkAllocatedIps },
    'service ranges: watching the ServiceCIDR objects of the cluster',
  );
  const ips = checkAllocatedIps
    ? startIPAddressWatch({ kc: loaded.kc, logger: log, metrics, ...timing })
    : undefined;
  const ranges = startServiceCidrWatch({
    kc: loaded.kc,
    description: loaded.description,
    logger: log,
    metrics,
    ...timing,
    extraDetail: () => ({ allocatedIPs: ips ? ips.health() : 'off (--no-check-allocated-ips)' }),
  });
  return {
    ranges,
    allocatedIPs: allocatedIPsOf(ips),
    close: async () => {
      await Promise.all([ranges.close(), ips?.close()]);
    },
  };
}
