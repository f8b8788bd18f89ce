/** Kubernetes I/O: where the rules' service ranges and allocated IPs come from. */
export { selectClusterSources, startClusterSources, type SelectDeps } from './select.js';
export { readClusterSnapshot, type ClusterSnapshot, type SnapshotOptions } from './snapshot.js';
export { startServiceCidrWatch, rangesFromServiceCidrs, isTerminating } from './service-cidrs.js';
export { startIPAddressWatch, holderFromIPAddress } from './ip-addresses.js';
export {
  findKubeconfig,
  loadKubeconfig,
  type KubeconfigOptions,
  type LoadedKubeconfig,
} from './kubeconfig.js';
export { staticRangeSource, staticSources } from './static-source.js';
export type { ClusterSources, RangeSource } from './types.js';
export { gatewayPageFetcher, gatewayPages, type GatewayPage } from './gateway-pages.js';
export { startLeaderElector, type LeaderElector } from './lease.js';
