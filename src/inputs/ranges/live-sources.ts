/**
 * The sources that use the cluster, loaded by select.ts only when one is
 * needed: the ServiceCIDR watch (or --service-cidr with an explicit
 * --check-allocated-ips), the allocated-IP lookups, and --dev's embedded default
 * when no usable kubeconfig is found.
 */
import type { Logger } from 'pino';
import { DEV_SERVICE_CIDR } from '../../config/serve.js';
import type { ServiceRanges } from '../../rules/index.js';
import { flagRanges, FLAG_SOURCE } from './flag-source.js';
import { kubeClient, type KubeClient } from '../../kube/client.js';
import { startAllocationLookup } from '../allocations/ip-addresses.js';
import { DEFAULT_LOOKUP_OPTIONS } from '../allocations/ip-lookup.js';
import {
  findKubeconfig,
  loadKubeconfig,
  NO_KUBECONFIG_REASON,
  oneLine,
  type KubeconfigOptions,
  type LoadedKubeconfig,
} from '../../kube/kubeconfig.js';
import { clusterMetrics, type ClusterMetrics } from './metrics.js';
import type { ServeConfig } from '../../config/serve.js';
import type { Registry } from 'prom-client';
import type { LookupOptions } from '../allocations/ip-lookup.js';
import { SERVICE_CIDR_FLAG_HINT, startServiceCidrWatch } from './service-cidrs.js';
import { devDefaultSources, staticRangeSource, staticSources } from './static-source.js';
import type { ClusterSources, RangeSource } from './types.js';
import type { BackoffOptions } from '../../kube/watch.js';

function unavailable(reason: string): ClusterSources {
  const ranges: RangeSource = {
    current: () => undefined,
    readiness: () => ({ ready: false, reason }),
    describe: () => ({ source: 'none', reason }),
    close: async () => {},
  };
  return { ranges, allocatedIPs: undefined, close: async () => {} };
}

interface Started {
  readonly log: Logger;
  readonly metrics: ClusterMetrics;
  readonly backoff: Partial<BackoffOptions> | undefined;
}

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

/** --service-cidr with an explicit --check-allocated-ips: the flag's ranges, and the IPAddress watch when credentials allow. */
function flagRangesWithAllocatedIPs(
  deps: SelectDeps,
  ranges: ServiceRanges,
  kubeconfigOptions: KubeconfigOptions,
  started: Started,
): ClusterSources {
  const { log } = started;
  const flagged = flagRanges(ranges, log, deps.registry);
  const loaded = tryLoad(kubeconfigOptions, log);
  if (!loaded) {
    log.warn(
      '--check-allocated-ips: no usable Kubernetes credentials; the ClusterAddressAllocated rule is skipped',
    );
    return staticSources(flagged, FLAG_SOURCE);
  }
  const ips = startAllocationLookup({
    client: lookupClient(loaded, deps),
    logger: log,
    registry: deps.registry,
    options: deps.lookup,
  });
  const base = staticRangeSource(flagged, FLAG_SOURCE);
  const rangeSource: RangeSource = {
    ...base,
    describe: () => ({ ...base.describe(), allocatedIPs: ips.describe() }),
  };
  return { ranges: rangeSource, allocatedIPs: ips, close: () => ips.close() };
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
    return devDefaultSources(problem.err === undefined ? 'no kubeconfig found' : 'kubeconfig unusable');
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
  return startClusterSources(loaded, config.checkAllocatedIps !== false, started, deps);
}

/** The lookups' own client: a pool as large as their concurrency, so a burst never waits for a socket. */
function lookupClient(loaded: LoadedKubeconfig, deps: SelectDeps): KubeClient {
  return kubeClient(loaded.kc, {
    maxSockets: deps.lookup?.concurrency ?? DEFAULT_LOOKUP_OPTIONS.concurrency,
  });
}

function tryLoad(options: KubeconfigOptions, log: Logger): LoadedKubeconfig | undefined {
  try {
    return loadKubeconfig(options);
  } catch (err) {
    log.warn({ err: oneLine(err) }, 'cannot load Kubernetes credentials');
    return undefined;
  }
}

/** Starts the ServiceCIDR watch (and the allocated-IP lookups when asked) against one cluster. */
function startClusterSources(
  loaded: LoadedKubeconfig,
  checkAllocatedIps: boolean,
  { log, metrics, backoff }: Started,
  deps: SelectDeps,
): ClusterSources {
  const timing = backoff ? { backoff } : {};
  log.info(
    { source: 'ServiceCIDR', cluster: loaded.description, checkAllocatedIps },
    'service ranges: watching the ServiceCIDR objects of the cluster',
  );
  const ips = checkAllocatedIps
    ? startAllocationLookup({
        client: lookupClient(loaded, deps),
        logger: log,
        registry: deps.registry,
        options: deps.lookup,
      })
    : undefined;
  const ranges = startServiceCidrWatch({
    client: kubeClient(loaded.kc),
    description: loaded.description,
    logger: log,
    metrics,
    ...timing,
    extraDetail: () => ({ allocatedIPs: ips ? ips.describe() : 'off (--no-check-allocated-ips)' }),
  });
  return {
    ranges,
    allocatedIPs: ips,
    close: async () => {
      await Promise.all([ranges.close(), ips?.close()]);
    },
  };
}
