/**
 * The rule context for a check: service ranges from --service-cidr, or read
 * once from the cluster with --from-cluster (and, with --gep-revision auto,
 * the GEP-5093 revision from its Gateway CRD). The Kubernetes client is
 * loaded only in the latter case, so a plain `check` never pays for it.
 */
import { errorMessage } from '../error-text.js';
import type { AllocationPrefetch } from '../inputs/allocations/allocation-prefetch.js';
import type { RevisionDecision } from '../inputs/revision/crd-revision-decision.js';
import type { AllocatedIPSource } from '../inputs/allocations/types.js';
import type { ClusterSnapshot as FullSnapshot } from '../inputs/snapshot.js';
import { offlineRevision, ruleContext } from '../config/rule-settings.js';
import type { GepRevision, RuleContext, ServiceRanges } from '../rules/index.js';
import type { CheckOptions } from './options.js';
import type { CheckSettings } from './report.js';

/**
 * The part of src/inputs' snapshot a check uses: the ranges, the allocated-IP
 * lookups (absent when the cluster has no IPAddress API) and, asked for with
 * readGepRevision, the revision (undefined when undecidable) and why.
 */
export type ClusterSnapshot = Pick<FullSnapshot, 'ranges' | 'allocatedIPs'> & {
  readonly gepRevision?: Pick<RevisionDecision, 'revision' | 'summary'>;
};

export type ReadClusterSnapshot = (options: {
  kubeconfig?: string | undefined;
  env?: Readonly<Record<string, string | undefined>>;
  readGepRevision?: boolean;
}) => Promise<ClusterSnapshot>;

/** Loads src/inputs/snapshot.ts (and with it @kubernetes/client-node) only when --from-cluster asks for it. */
async function loadClusterReader(): Promise<ReadClusterSnapshot> {
  return (await import('../inputs/snapshot.js')).readClusterSnapshot;
}

export type Resolved =
  | {
      readonly ok: true;
      readonly ctx: RuleContext;
      readonly settings: CheckSettings;
      /** With --from-cluster: runs the rules with allocated-IP lookups; close it when done. */
      readonly allocations?: { readonly prefetch: AllocationPrefetch; close(): Promise<void> } | undefined;
      /** With --from-cluster and auto: what the Gateway CRD carries (for stderr). */
      readonly revisionNote?: string;
    }
  /** `usage`: a flag problem (the help hint applies), not an unreachable cluster. */
  | { readonly ok: false; readonly error: string; readonly usage: boolean };

/** What the cluster adds to the flags: its ranges, allocated IPs and (with auto) the CRD's revision. */
interface ClusterInputs {
  readonly ranges: ServiceRanges | undefined;
  readonly allocatedIPs: AllocatedIPSource | undefined;
  readonly revision: GepRevision;
  readonly revisionFrom: CheckSettings['gepRevisionFrom'];
  readonly revisionNote?: string;
}

type Failure = Extract<Resolved, { ok: false }>;

async function readInputs(
  options: Pick<CheckOptions, 'rules' | 'fromCluster' | 'kubeconfig'>,
  env: Readonly<Record<string, string | undefined>>,
  loadReader: () => Promise<ReadClusterSnapshot>,
): Promise<ClusterInputs | Failure> {
  const rules = options.rules;
  const offline: ClusterInputs = {
    ranges: rules.serviceRanges,
    allocatedIPs: undefined,
    revision: offlineRevision(rules.gepRevision),
    revisionFrom: rules.gepRevision === 'auto' ? 'default' : 'flag',
  };
  if (!options.fromCluster) return offline;
  const followCrd = rules.gepRevision === 'auto';
  let snapshot: ClusterSnapshot;
  try {
    const read = await loadReader();
    snapshot = await read({
      kubeconfig: options.kubeconfig,
      env,
      ...(followCrd ? { readGepRevision: true } : {}),
    });
  } catch (err) {
    return { ok: false, error: `--from-cluster: ${errorMessage(err)}`, usage: false };
  }
  const read = { ...offline, ranges: offline.ranges ?? snapshot.ranges, allocatedIPs: snapshot.allocatedIPs };
  const crd = followCrd ? snapshot.gepRevision : undefined;
  if (crd === undefined) return read;
  if (crd.revision === undefined) {
    await snapshot.allocatedIPs?.close();
    return { ok: false, error: `--from-cluster: ${crd.summary}`, usage: false };
  }
  return { ...read, revision: crd.revision, revisionFrom: 'cluster', revisionNote: crd.summary };
}

export async function resolveContext(
  options: Pick<CheckOptions, 'rules' | 'fromCluster' | 'kubeconfig'>,
  env: Readonly<Record<string, string | undefined>>,
  loadReader: () => Promise<ReadClusterSnapshot> = loadClusterReader,
): Promise<Resolved> {
  const rules = options.rules;
  const inputs = await readInputs(options, env, loadReader);
  if ('ok' in inputs) return inputs;
  const { ranges, allocatedIPs: source, revision, revisionNote } = inputs;
  if (ranges === undefined || ranges.isEmpty) {
    await source?.close();
    return {
      ok: false,
      error: 'no service ranges: give --service-cidr, or --from-cluster against a cluster with ServiceCIDRs',
      usage: true,
    };
  }
  // Loaded with the cluster reader only: a plain check imports nothing that reads the cluster.
  const prefetch = source
    ? (await import('../inputs/allocations/allocation-prefetch.js')).allocationPrefetch(source)
    : undefined;
  return {
    ok: true,
    ctx: ruleContext(rules, ranges, prefetch?.recorder, revision),
    ...(source && prefetch ? { allocations: { prefetch, close: () => source.close() } } : {}),
    ...(revisionNote !== undefined ? { revisionNote } : {}),
    settings: {
      gepRevision: revision,
      gepRevisionFrom: inputs.revisionFrom,
      rangesFrom: rules.serviceCidrs.length > 0 ? 'flag' : 'cluster',
      serviceCidrs: ranges.all.map((r) => r.cidr),
      clusterDomain: rules.clusterDomain,
      specPolicy: rules.specPolicy,
      statusPolicy: rules.statusPolicy,
      allowedRoutability: rules.allowedRoutability ? [...rules.allowedRoutability].sort() : undefined,
      allocatedIPs: source !== undefined,
    },
  };
}
