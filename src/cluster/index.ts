/**
 * Kubernetes I/O for the one-shot commands (`check --from-cluster`, `audit`):
 * the service ranges and allocated IPs read once, credentials, and the
 * cluster's stored Gateways page by page.
 */
export { readClusterSnapshot, type ClusterSnapshot, type SnapshotOptions } from './snapshot.js';
export { loadKubeconfig } from '../kube/kubeconfig.js';
export { gatewayPageFetcher, gatewayPages, type GatewayPage } from './gateway-pages.js';
export { startLeaderElector, type LeaderElector } from './lease.js';
export { startReportWriter, type ReportWriter } from './report-writer.js';
