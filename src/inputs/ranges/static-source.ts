import { DEV_SERVICE_CIDR } from '../../config/serve.js';
import { ServiceRanges } from '../../rules/index.js';
import type { ClusterSources, RangeSource } from './types.js';

/** Ranges fixed at start-up (the --service-cidr flag, or --dev's embedded default). */
export function staticRangeSource(ranges: ServiceRanges, source: string): RangeSource {
  return {
    current: () => ranges,
    readiness: () => ({ ready: true }),
    describe: () => ({ source, ranges: ranges.all.map((r) => r.cidr) }),
    close: async () => {},
  };
}

export function staticSources(ranges: ServiceRanges, source: string): ClusterSources {
  return { ranges: staticRangeSource(ranges, source), allocatedIPs: undefined, close: async () => {} };
}

/** --dev without a cluster: kubeadm's default range; `why` says why there is no cluster. */
export function devDefaultSources(why: string): ClusterSources {
  const parsed = ServiceRanges.parse([DEV_SERVICE_CIDR]);
  if (!parsed.ok) throw new Error(parsed.error);
  return staticSources(parsed.ranges, `--dev default ${DEV_SERVICE_CIDR} (${why})`);
}
