/**
 * One-shot read of the cluster's service ranges, for `check --from-cluster`:
 * lists the ServiceCIDRs once, watches nothing. Allocated IPs are looked up
 * one address at a time as the checked Gateways ask for them.
 */
import pino from 'pino';
import type { ServiceRanges } from '../rules/index.js';
import type { RevisionDecision } from './revision/crd-revision-decision.js';
import { readGatewayCrdRevision } from './revision/crd-revision.js';
import { kubeClient, type KubeClient } from '../kube/client.js';
import { describeKubeError, httpStatusOf } from '../kube/errors.js';
import { startAllocationLookup } from './allocations/ip-addresses.js';
import { loadKubeconfig, type KubeconfigOptions } from '../kube/kubeconfig.js';
import { listServiceCidrs, rangesFromServiceCidrs, SERVICE_CIDR_FLAG_HINT } from './ranges/service-cidrs.js';
import type { AllocatedIPSource } from './allocations/types.js';

export interface ClusterSnapshot {
  readonly ranges: ServiceRanges;
  /** Undefined when the cluster serves no IPAddress API. Close it when done. */
  readonly allocatedIPs?: AllocatedIPSource;
  /** E.g. `ServiceCIDR objects (networking.k8s.io/v1) from https://…`. */
  readonly source: string;
  /** With `readGepRevision`: what the cluster's Gateway CRD says about the GEP-5093 revision. */
  readonly gepRevision?: RevisionDecision;
}

export interface SnapshotOptions extends KubeconfigOptions {
  /** Per request (default 15 s). */
  readonly timeoutMs?: number;
  /** Also read the Gateway CRD (for --gep-revision auto); an unreadable one fails the snapshot. */
  readonly readGepRevision?: boolean;
}

type Loaded = ReturnType<typeof loadKubeconfig>;

/** The ServiceCIDRs' ranges, from v1 or else v1beta1; throws a message naming the way out. */
async function readRanges(
  loaded: Loaded,
  client: KubeClient,
  timeoutMs: number,
): Promise<{ ranges: ServiceRanges; apiVersion: string }> {
  const where = `the Kubernetes API at ${loaded.server} (${loaded.description})`;
  for (const version of ['v1', 'v1beta1']) {
    let objects;
    try {
      objects = (await listServiceCidrs(client, version, timeoutMs)).items;
    } catch (err) {
      if (httpStatusOf(err) === 404) continue;
      throw new Error(
        httpStatusOf(err) === undefined
          ? `cannot reach ${where}: ${describeKubeError(err)}`
          : `listing ServiceCIDRs (networking.k8s.io/${version}) failed at ${loaded.server}: ${describeKubeError(err)}`,
      );
    }
    const { ranges, skipped } = rangesFromServiceCidrs(objects);
    if (ranges.isEmpty)
      throw new Error(
        `the cluster at ${loaded.server} has no usable ServiceCIDR objects${skipped.length ? ` (${skipped.join('; ')})` : ''}: ${SERVICE_CIDR_FLAG_HINT}`,
      );
    return { ranges, apiVersion: `networking.k8s.io/${version}` };
  }
  throw new Error(
    `the cluster at ${loaded.server} serves no ServiceCIDR API (networking.k8s.io/v1 or v1beta1; Kubernetes 1.31+ needed): use --service-cidr instead`,
  );
}

/** Allocated-IP lookups, or undefined when the cluster serves no IPAddress API. */
async function openAllocationLookup(
  loaded: Loaded,
  client: KubeClient,
  timeoutMs: number,
): Promise<AllocatedIPSource | undefined> {
  // One probe (a GET no address answers) says whether lookups will work, as the list did before.
  const lookup = startAllocationLookup({
    client,
    logger: pino({ level: 'silent' }),
    options: { timeoutMs, probeAtStart: false, probeIntervalMs: 2 ** 31 - 1, askWhileUnavailable: true },
  });
  const state = await lookup.probe();
  if (state !== 'unavailable' && state !== 'absent') return lookup;
  await lookup.close();
  if (state === 'absent') return undefined;
  throw new Error(
    `reading IPAddresses (networking.k8s.io/v1) failed at ${loaded.server}: ${lookup.lastErrorReason() ?? 'unknown error'}`,
  );
}

export async function readClusterSnapshot(options: SnapshotOptions = {}): Promise<ClusterSnapshot> {
  const loaded = loadKubeconfig(options);
  const timeoutMs = options.timeoutMs ?? 15_000;
  const client = kubeClient(loaded.kc);
  let allocatedIPs: AllocatedIPSource | undefined;
  let gepRevision: RevisionDecision | undefined;
  let ranges: Awaited<ReturnType<typeof readRanges>>;
  try {
    ranges = await readRanges(loaded, client, timeoutMs);
    allocatedIPs = await openAllocationLookup(loaded, client, timeoutMs);
    if (options.readGepRevision) gepRevision = await readGatewayCrdRevision(client, timeoutMs);
  } catch (err) {
    await allocatedIPs?.close();
    client.close();
    throw err;
  }
  const { ranges: serviceRanges, apiVersion } = ranges;
  return {
    ranges: serviceRanges,
    ...(allocatedIPs ? { allocatedIPs } : {}),
    ...(gepRevision ? { gepRevision } : {}),
    source: `ServiceCIDR objects (${apiVersion}) from ${loaded.server}`,
  };
}
