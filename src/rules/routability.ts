/** Routability value syntax and the per-address rules shared by spec and status. */
import type { FieldPath } from './field-path.js';
import type { AddressEntry } from './gateway.js';
import { jsonText } from './json-text.js';
import { isGloballyRoutable, parseIP, type ParsedIP } from './ip.js';
import { reservedKind as reservedKindOf } from './networks.js';
import { finding, type Finding, type RuleContext } from './types.js';

/**
 * The routability pattern, anchored as a whole. AddressType's upstream pattern
 * binds `^` and `$` only to its first and last alternatives; this one does not.
 * The CRD patch uses this very string, so the apiserver and the engine agree.
 */
export const ROUTABILITY_PATTERN =
  "^(External|Cluster|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+)$";
export const ROUTABILITY_MAX_LENGTH = 253;
const ROUTABILITY_RE = new RegExp(ROUTABILITY_PATTERN);

export type WellKnown = 'External' | 'Cluster';

/** One part of an entry key: strings length-prefixed (so no two keys collide), anything else as JSON. */
function keyPart(value: unknown): string {
  if (typeof value === 'string') return `s${value.length}:${value}`;
  return `j${jsonText(value ?? null)}`;
}

/** Identity used for ratcheting: (type, value, routability) as stored. */
export function entryKey(entry: AddressEntry): string {
  return keyPart(entry.type) + keyPart(entry.value) + keyPart(entry.routability);
}

/** The syntax rule: a string matching the pattern, at most 253 characters. */
export function checkRoutabilitySyntax(
  value: unknown,
  field: FieldPath | (() => FieldPath),
): Finding | undefined {
  const at = () => (typeof field === 'function' ? field() : field);
  if (typeof value !== 'string')
    return finding('RoutabilityUnsupported', at(), { value, reason: 'notString' });
  if (value.length > ROUTABILITY_MAX_LENGTH)
    return finding('RoutabilityUnsupported', at(), { value, reason: 'tooLong' });
  if (!ROUTABILITY_RE.test(value))
    return finding('RoutabilityUnsupported', at(), { value, reason: 'syntax' });
  return undefined;
}

export function isWellKnown(value: unknown): value is WellKnown {
  return value === 'External' || value === 'Cluster';
}

/** `.svc.cluster.local`, lower-cased, for the configured cluster domain. */
export function clusterServiceSuffix(clusterDomain: string): string {
  return `.svc.${clusterDomain.toLowerCase().replace(/\.$/, '')}`;
}

export function isClusterDomainHostname(value: string, clusterDomain: string): boolean {
  return value.toLowerCase().replace(/\.$/, '').endsWith(clusterServiceSuffix(clusterDomain));
}

/** The IP of an IPAddress-typed entry with a value, or a finding when it is no IP. */
export function entryIP(entry: AddressEntry, routability: string): ParsedIP | Finding | undefined {
  if (entry.type !== 'IPAddress' || entry.value === undefined) return undefined;
  const ip = typeof entry.value === 'string' ? parseIP(entry.value) : undefined;
  return (
    ip ?? finding('AddressValueInvalid', entry.field.child('value'), { value: entry.value, routability })
  );
}

/** Renders an IPAddress parentRef as `services/kube-system/kube-dns`. */
export function describeHolder(h: {
  group: string;
  resource: string;
  namespace: string;
  name: string;
}): string {
  const resource = h.group ? `${h.resource}.${h.group}` : h.resource;
  return h.namespace ? `${resource}/${h.namespace}/${h.name}` : `${resource}/${h.name}`;
}

/**
 * Rules for an entry that says (or, in status, defaults to) External or
 * Cluster and carries a value. `requesting` is true for new spec requests:
 * they may not be satisfied from a terminating range, from reserved
 * addresses, or from an IP someone else holds.
 */
export function checkAddressScope(
  entry: AddressEntry,
  routability: WellKnown,
  ctx: RuleContext,
  options: { requesting: boolean; unset: boolean; gateway?: { namespace: string; name: string } },
): Finding[] {
  const out: Finding[] = [];
  // Built only for a finding: most addresses have none.
  const valueField = () => entry.field.child('value');
  if (entry.type === 'Hostname' && typeof entry.value === 'string') {
    if (routability === 'External' && isClusterDomainHostname(entry.value, ctx.clusterDomain)) {
      out.push(
        finding('ExternalHostnameInClusterDomain', valueField(), {
          value: entry.value,
          suffix: clusterServiceSuffix(ctx.clusterDomain),
          unset: options.unset,
        }),
      );
    }
    return out;
  }
  const ip = entryIP(entry, routability);
  if (ip === undefined) return out;
  if (!('bits' in ip)) return [ip];
  const value = entry.value as string;
  const containing = ctx.ranges.containing(ip);

  if (routability === 'External') {
    if (containing.length > 0) {
      out.push(
        finding('ExternalAddressInsideServiceRange', valueField(), {
          value,
          cidr: containing[0]!.cidr,
          unset: options.unset,
        }),
      );
    }
    return out;
  }

  const usable = options.requesting ? containing.filter((r) => !r.terminating) : containing;
  if (usable.length === 0) {
    const terminating = containing.filter((r) => r.terminating).map((r) => r.cidr);
    out.push(
      finding('ClusterAddressOutsideServiceRange', valueField(), {
        value,
        ranges: ctx.ranges.describe((r) => !options.requesting || !r.terminating),
        ...(ctx.ranges.hasFamily(ip.family, !options.requesting) ? {} : { missingFamily: ip.family }),
        ...(terminating.length > 0 ? { terminating: terminating.join(', ') } : {}),
      }),
    );
    return out;
  }
  if (options.requesting) {
    // Reserved only when no usable range would hand it out (overlapping ranges may).
    const reserved = usable.map((r) => ({ r, kind: reservedKindOf(ip, r) }));
    if (reserved.every((x) => x.kind !== undefined)) {
      const first = reserved[0]!;
      out.push(
        finding('ClusterAddressReserved', valueField(), { value, kind: first.kind!, cidr: first.r.cidr }),
      );
      return out;
    }
    const holder = ctx.allocatedIPs?.holderOf(ip.canonical);
    if (holder && !isGatewayItself(holder, options.gateway)) {
      out.push(finding('ClusterAddressAllocated', valueField(), { value, holder: describeHolder(holder) }));
      return out;
    }
    const unchecked = holder ? undefined : ctx.allocatedIPs?.uncheckedReason?.(ip.canonical);
    if (unchecked !== undefined)
      out.push(finding('ClusterAddressAllocationUnchecked', valueField(), { value, reason: unchecked }));
  }
  if (isGloballyRoutable(ip)) out.push(finding('ClusterAddressGloballyRoutable', valueField(), { value }));
  return out;
}

function isGatewayItself(
  holder: { group: string; resource: string; namespace: string; name: string },
  gateway: { namespace: string; name: string } | undefined,
): boolean {
  return (
    gateway !== undefined &&
    holder.group === 'gateway.networking.k8s.io' &&
    holder.resource === 'gateways' &&
    holder.namespace === gateway.namespace &&
    holder.name === gateway.name
  );
}

/** Normalised identity of an address value, for matching status against spec. */
export function addressIdentity(entry: AddressEntry): string | undefined {
  if (typeof entry.value !== 'string') return undefined;
  if (entry.type === 'IPAddress') {
    const ip = parseIP(entry.value);
    return ip ? `IPAddress/${ip.canonical}` : undefined;
  }
  if (entry.type === 'Hostname') return `Hostname/${entry.value.toLowerCase().replace(/\.$/, '')}`;
  const type = typeof entry.type === 'string' ? entry.type : jsonText(entry.type);
  return `${type}/${entry.value}`;
}
