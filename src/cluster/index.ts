/**
 * Kubernetes I/O loaded lazily by the commands and the audit (client-node is
 * loaded only when there are credentials): the service ranges and allocated
 * IPs read once, credentials, and the audit's Lease.
 */
export { readClusterSnapshot, type ClusterSnapshot, type SnapshotOptions } from './snapshot.js';
export { loadKubeconfig } from '../kube/kubeconfig.js';
export { startLeaderElector, type LeaderElector } from './lease.js';
