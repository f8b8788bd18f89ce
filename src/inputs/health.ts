/** What the cluster-fed inputs tell /readyz: each provides its own component. */
import { sourceComponent, type HealthComponent } from '../readiness.js';
import type { ClusterSources, RangeSource } from './ranges/types.js';

/** Not ready while the service ranges are unknown; verbose detail: source, ranges, watch health. */
export function serviceRangesComponent(ranges: RangeSource): HealthComponent {
  return sourceComponent('service-ranges', 'serviceRanges', ranges);
}

/**
 * Reports only: the allocated-IP list never holds readiness back (a review
 * is answered before the first IPAddress list arrives, as it always was).
 */
export function allocatedIPsComponent(allocatedIPs: ClusterSources['allocatedIPs']): HealthComponent {
  return {
    name: 'allocated-ips',
    detail: {
      key: 'allocatedIPs',
      describe: () => (allocatedIPs ? allocatedIPs.describe() : 'off'),
    },
  };
}
