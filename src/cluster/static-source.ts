import type { ServiceRanges } from '../rules/index.js';
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
