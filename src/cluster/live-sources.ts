/**
 * The sources that use the cluster, loaded by select.ts only when one is
 * needed: the ServiceCIDR watch (or --service-cidr with an explicit
 * --check-allocated-ips), the IPAddress watch, and --dev's embedded default
 * when no usable kubeconfig is found.
 */
import type { Logger } from 'pino';
import { DEV_SERVICE_CIDR } from '../config/serve.js';
import { ServiceRanges } from '../rules/index.js';
import { flagRanges, FLAG_SOURCE } from './flag-source.js';
import { startIPAddressWatch, type IPAddressWatch } from './ip-addresses.js';
import {
  findKubeconfig,
  loadKubeconfig,
  NO_KUBECONFIG_REASON,
  oneLine,
  type KubeconfigOptions,
  type LoadedKubeconfig,
} from './kubeconfig.js';
import { clusterMetrics, type ClusterMetrics } from './metrics.js';
import type { SelectDeps } from './select.js';
import { SERVICE_CIDR_FLAG_HINT, startServiceCidrWatch } from './service-cidrs.js';
import { staticRangeSource, staticSources } from './static-source.js';
import type { ClusterSources, RangeSource } from './types.js';
import type { BackoffOptions } from './watch.js';

function unavailable(reason: string): ClusterSources {
  const ranges: RangeSource = {
    current: () => undefined,
    readiness: () => ({ ready: false, reason }),
    describe: () => ({ source: 'none', reason }),
    close: async () => {},
  };
  return { ranges, allocatedIPs: undefined, close: async () => {} };
}

function devDefault(why: string): ClusterSources {
  const parsed = ServiceRanges.parse([DEV_SERVICE_CIDR]);
  if (!parsed.ok) throw new Error(parsed.error);
  return staticSources(parsed.ranges, `--dev default ${DEV_SERVICE_CIDR} (${why})`);
}

function allocatedIPsOf(watch: IPAddressWatch | undefined): ClusterSources['allocatedIPs'] {
  if (!watch) return undefined;
  return { holderOf: (ip) => watch.holderOf(ip), ready: () => watch.ready() };
}

interface Started {
  readonly log: Logger;
  readonly metrics: ClusterMetrics;
  readonly backoff: Partial<BackoffOptions> | undefined;
}

/** --service-cidr with an explicit --check-allocated-ips: the flag's ranges, and the IPAddress watch when credentials allow. */
function flagRangesWithAllocatedIPs(
  deps: SelectDeps,
  ranges: ServiceRanges,
  kubeconfigOptions: KubeconfigOptions,
  started: Started,
): ClusterSources {
  const { log, metrics } = started;
  const flagged = flagRanges(ranges, log, deps.registry);
  const loaded = tryLoad(kubeconfigOptions, log);
  if (!loaded) {
    log.warn(
      '--check-allocated-ips: no usable Kubernetes credentials; the ClusterAddressAllocated rule is skipped',
    );
    return staticSources(flagged, FLAG_SOURCE);
  }
  const timing = started.backoff ? { backoff: started.backoff } : {};
  const ips = startIPAddressWatch({ kc: loaded.kc, logger: log, metrics, ...timing });
  const base = staticRangeSource(flagged, FLAG_SOURCE);
  const rangeSource: RangeSource = {
    ...base,
    describe: () => ({ ...base.describe(), allocatedIPs: ips.health() }),
  };
  return { ranges: rangeSource, allocatedIPs: allocatedIPsOf(ips), close: () => ips.close() };
}

/** No kubeconfig, or one that cannot be loaded: --dev's default, else not ready with the reason. */
function withoutCluster(deps: SelectDeps, log: Logger, problem: { reason: string; err?: string }) {
  if (deps.config.dev) {
    if (problem.err === undefined)
      log.warn(
        { source: 'dev-default', ranges: DEV_SERVICE_CIDR },
        'no kubeconfig found; service ranges: --dev embedded default',
      );
    else
      log.warn(
        { err: problem.err, ranges: DEV_SERVICE_CIDR },
        'kubeconfig unusable; service ranges: --dev embedded default',
      );
    return devDefault(problem.err === undefined ? 'no kubeconfig found' : 'kubeconfig unusable');
  }
  log.error(problem.reason);
  return unavailable(problem.reason);
}

export function liveClusterSources(deps: SelectDeps, log: Logger): ClusterSources {
  const { config } = deps;
  const started: Started = { log, metrics: clusterMetrics(deps.registry), backoff: deps.backoff };
  const kubeconfigOptions: KubeconfigOptions = { ...deps.kubeconfigOptions, kubeconfig: config.kubeconfig };

  if (config.serviceRanges !== undefined)
    return flagRangesWithAllocatedIPs(deps, config.serviceRanges, kubeconfigOptions, started);

  if (!findKubeconfig(kubeconfigOptions))
    return withoutCluster(deps, log, {
      reason: `service ranges unknown: ${NO_KUBECONFIG_REASON}; ${SERVICE_CIDR_FLAG_HINT}, or --kubeconfig`,
    });

  let loaded: LoadedKubeconfig;
  try {
    loaded = loadKubeconfig(kubeconfigOptions);
  } catch (err) {
    return withoutCluster(deps, log, {
      reason: `service ranges unknown: ${oneLine(err)}; ${SERVICE_CIDR_FLAG_HINT}`,
      err: oneLine(err),
    });
  }
  return startClusterSources(loaded, config.checkAllocatedIps !== false, started);
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
function startClusterSources(
  loaded: LoadedKubeconfig,
  checkAllocatedIps: boolean,
  { log, metrics, backoff }: Started,
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
