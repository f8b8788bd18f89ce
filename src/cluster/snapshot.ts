/**
 * One-shot read of the cluster's service ranges and allocated IPs, for
 * `check --from-cluster`: lists once, watches nothing.
 */
import type { ServiceRanges } from '../rules/index.js';
import type { AllocatedIPs } from '../rules/index.js';
import { describeKubeError, httpStatusOf, withTimeout } from './errors.js';
import { holdersFromIPAddresses, ipAddressLister } from './ip-addresses.js';
import { loadKubeconfig, type KubeconfigOptions } from './kubeconfig.js';
import { rangesFromServiceCidrs, SERVICE_CIDR_FLAG_HINT, serviceCidrLister } from './service-cidrs.js';

export interface ClusterSnapshot {
  readonly ranges: ServiceRanges;
  /** Undefined when the cluster serves no IPAddress API. */
  readonly allocatedIPs?: AllocatedIPs;
  /** E.g. `ServiceCIDR objects (networking.k8s.io/v1) from https://…`. */
  readonly source: string;
}

export interface SnapshotOptions extends KubeconfigOptions {
  /** Per request (default 15 s). */
  readonly timeoutMs?: number;
}

export async function readClusterSnapshot(options: SnapshotOptions = {}): Promise<ClusterSnapshot> {
  const loaded = loadKubeconfig(options);
  const timeoutMs = options.timeoutMs ?? 15_000;
  const where = `the Kubernetes API at ${loaded.server} (${loaded.description})`;
  const fail = (what: string, err: unknown): Error =>
    new Error(
      httpStatusOf(err) === undefined
        ? `cannot reach ${where}: ${describeKubeError(err)}`
        : `${what} failed at ${loaded.server}: ${describeKubeError(err)}`,
    );

  const listCidrs = serviceCidrLister(loaded.kc);
  let apiVersion: string | undefined;
  let objects;
  for (const version of ['v1', 'v1beta1']) {
    try {
      objects = (await withTimeout(listCidrs(version), timeoutMs, `list ServiceCIDRs at ${loaded.server}`))
        .items;
      apiVersion = `networking.k8s.io/${version}`;
      break;
    } catch (err) {
      if (httpStatusOf(err) === 404) continue;
      throw fail(`listing ServiceCIDRs (networking.k8s.io/${version})`, err);
    }
  }
  if (!objects || !apiVersion)
    throw new Error(
      `the cluster at ${loaded.server} serves no ServiceCIDR API (networking.k8s.io/v1 or v1beta1; Kubernetes 1.31+ needed): use --service-cidr instead`,
    );
  const { ranges, skipped } = rangesFromServiceCidrs(objects);
  if (ranges.isEmpty)
    throw new Error(
      `the cluster at ${loaded.server} has no usable ServiceCIDR objects${skipped.length ? ` (${skipped.join('; ')})` : ''}: ${SERVICE_CIDR_FLAG_HINT}`,
    );

  let allocatedIPs: AllocatedIPs | undefined;
  try {
    const list = await withTimeout(
      ipAddressLister(loaded.kc)('v1'),
      timeoutMs,
      `list IPAddresses at ${loaded.server}`,
    );
    const holders = holdersFromIPAddresses(list.items);
    allocatedIPs = { holderOf: (ip) => holders.get(ip) };
  } catch (err) {
    if (httpStatusOf(err) !== 404) throw fail('listing IPAddresses (networking.k8s.io/v1)', err);
  }

  return {
    ranges,
    ...(allocatedIPs ? { allocatedIPs } : {}),
    source: `ServiceCIDR objects (${apiVersion}) from ${loaded.server}`,
  };
}
