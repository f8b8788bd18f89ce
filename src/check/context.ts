/**
 * The rule context for a check: service ranges from --service-cidr, or read
 * once from the cluster with --from-cluster. The Kubernetes client is loaded
 * only in the latter case, so a plain `check` never pays for it.
 */
import { ruleContext } from '../config/rules.js';
import type { AllocatedIPs, RuleContext, ServiceRanges } from '../rules/index.js';
import type { CheckOptions } from './options.js';
import type { CheckSettings } from './report.js';

/** The part of src/cluster's snapshot a check uses. */
export interface ClusterSnapshot {
  readonly ranges: ServiceRanges;
  readonly allocatedIPs?: AllocatedIPs | undefined;
}

export type ReadClusterSnapshot = (options: {
  kubeconfig?: string | undefined;
  env?: Readonly<Record<string, string | undefined>>;
}) => Promise<ClusterSnapshot>;

/** Loads src/cluster (and with it @kubernetes/client-node) only when --from-cluster asks for it. */
async function loadClusterReader(): Promise<ReadClusterSnapshot> {
  return (await import('../cluster/index.js')).readClusterSnapshot;
}

export type Resolved =
  | { readonly ok: true; readonly ctx: RuleContext; readonly settings: CheckSettings }
  /** `usage`: a flag problem (the help hint applies), not an unreachable cluster. */
  | { readonly ok: false; readonly error: string; readonly usage: boolean };

export async function resolveContext(
  options: Pick<CheckOptions, 'rules' | 'fromCluster' | 'kubeconfig'>,
  env: Readonly<Record<string, string | undefined>>,
  loadReader: () => Promise<ReadClusterSnapshot> = loadClusterReader,
): Promise<Resolved> {
  const rules = options.rules;
  let ranges = rules.serviceRanges;
  let allocatedIPs: AllocatedIPs | undefined;
  if (options.fromCluster) {
    let snapshot: ClusterSnapshot;
    try {
      const read = await loadReader();
      snapshot = await read({ kubeconfig: options.kubeconfig, env });
    } catch (err) {
      return { ok: false, error: `--from-cluster: ${(err as Error).message}`, usage: false };
    }
    ranges ??= snapshot.ranges;
    allocatedIPs = snapshot.allocatedIPs;
  }
  if (ranges === undefined || ranges.isEmpty)
    return {
      ok: false,
      error: 'no service ranges: give --service-cidr, or --from-cluster against a cluster with ServiceCIDRs',
      usage: true,
    };
  return {
    ok: true,
    ctx: ruleContext(rules, ranges, allocatedIPs),
    settings: {
      rangesFrom: rules.serviceCidrs.length > 0 ? 'flag' : 'cluster',
      serviceCidrs: ranges.all.map((r) => r.cidr),
      clusterDomain: rules.clusterDomain,
      specPolicy: rules.specPolicy,
      statusPolicy: rules.statusPolicy,
      allowedRoutability: rules.allowedRoutability ? [...rules.allowedRoutability].sort() : undefined,
      allocatedIPs: allocatedIPs !== undefined,
    },
  };
}
