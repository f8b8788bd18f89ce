/**
 * Routability values as each GEP-5093 revision reads them, and the
 * per-address rules shared by spec and status.
 */
import type { FieldPath } from './field-path.js';
import { GATEWAY_API_GROUP, type AddressEntry } from './gateway.js';
import { isGloballyRoutable, parseIP, type ParsedIP } from './ip.js';
import { jsonText } from './json-text.js';
import {
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  DNS1123_SUBDOMAIN_SOURCE,
  DOMAIN_PREFIXED_PATH_SOURCE,
  isDns1123Subdomain,
} from './names.js';
import { parseCidr, reservedKind as reservedKindOf, type ServiceRange } from './networks.js';
import type { GepRevision } from './revision.js';
import { finding, type Finding, type RuleContext } from './types.js';

/**
 * The provisional routability pattern, anchored as a whole. AddressType's
 * upstream pattern binds `^` and `$` only to its first and last alternatives;
 * this one does not. The CRD patch uses this very string, so the apiserver and
 * the engine agree.
 */
export const ROUTABILITY_PATTERN = `^(External|Cluster|${DNS1123_SUBDOMAIN_SOURCE}\\/${DOMAIN_PREFIXED_PATH_SOURCE})$`;
export const ROUTABILITY_MAX_LENGTH = DNS1123_SUBDOMAIN_MAX_LENGTH;
const ROUTABILITY_RE = new RegExp(ROUTABILITY_PATTERN);

/** Upstream reserves these prefixes; conformance uses `testing.x-k8s.io/…`. */
const isReservedPrefix = (prefix: string) => prefix === 'k8s.io' || prefix.endsWith('.k8s.io');
export const TESTING_PREFIX = 'testing.x-k8s.io';
export const TESTING_SENTINEL = 'testing.x-k8s.io/sentinel';

export type WellKnown = 'External' | 'Cluster';

/**
 * What a routability means for the rules. `none`: no requirement (provisional
 * spec unset; experimental unset or `""`). `External` in status may be the
 * provisional reading of unset (`unset: true`).
 */
export type Routability =
  | { readonly kind: 'invalid'; readonly finding: Finding }
  | { readonly kind: 'none' }
  | { readonly kind: 'External'; readonly unset: boolean }
  | { readonly kind: 'Cluster' }
  | { readonly kind: 'prefixed'; readonly value: string };

const NONE: Routability = { kind: 'none' };
const CLUSTER: Routability = { kind: 'Cluster' };
const EXTERNAL: Routability = { kind: 'External', unset: false };
const EXTERNAL_UNSET: Routability = { kind: 'External', unset: true };

/**
 * The syntax rule of the revision: provisional, a string matching the pattern;
 * experimental, upstream's CEL rule; both at most 253 characters.
 */
export function checkRoutabilitySyntax(
  value: unknown,
  field: FieldPath | (() => FieldPath),
  revision: GepRevision = 'provisional',
): Finding | undefined {
  const at = () => (typeof field === 'function' ? field() : field);
  if (typeof value !== 'string')
    return finding('RoutabilityUnsupported', at(), { value, reason: 'notString', revision });
  if (value.length > ROUTABILITY_MAX_LENGTH)
    return finding('RoutabilityUnsupported', at(), { value, reason: 'tooLong', revision });
  if (revision === 'provisional') {
    if (ROUTABILITY_RE.test(value)) return undefined;
    return finding('RoutabilityUnsupported', at(), { value, reason: 'syntax', revision });
  }
  if (value === '' || value === 'Cluster') return undefined;
  if (value === 'External')
    return finding('RoutabilityUnsupported', at(), { value, reason: 'externalRemoved', revision });
  const slash = value.indexOf('/');
  const prefix = slash < 0 ? '' : value.slice(0, slash);
  // Upstream's format.dns1123Subdomain(): ≤ 253 characters and, like upstream, no 63-character cap
  // per label (docs/dev/decisions.md): a value the CRD admits is not denied for its label length.
  if (slash < 0 || slash === value.length - 1 || !isDns1123Subdomain(prefix))
    return finding('RoutabilityUnsupported', at(), { value, reason: 'syntax', revision });
  if (isReservedPrefix(prefix))
    return finding('RoutabilityUnsupported', at(), { value, reason: 'reservedPrefix', revision });
  return undefined;
}

/** Reads an entry's routability under the revision; `status` says which list it is in. */
export function readRoutability(entry: AddressEntry, ctx: RuleContext, status: boolean): Routability {
  const value = entry.routability;
  const revision = ctx.revision ?? 'provisional';
  if (value === undefined) return status && revision === 'provisional' ? EXTERNAL_UNSET : NONE;
  if (value === 'Cluster') return CLUSTER;
  if (value === 'External' && revision === 'provisional') return EXTERNAL;
  if (value === '' && revision === 'experimental') return NONE;
  const syntax = checkRoutabilitySyntax(value, () => entry.field.child('routability'), revision);
  if (syntax) return { kind: 'invalid', finding: syntax };
  return { kind: 'prefixed', value: value as string };
}

/**
 * The routability an entry stands for, as a comparable string: provisional
 * status unset is `External`; experimental unset is `""`; provisional spec
 * unset stays unset (undefined). Invalid values compare as written.
 */
export function effectiveRoutability(entry: AddressEntry, ctx: RuleContext, status: boolean): unknown {
  const value = entry.routability;
  if (value !== undefined) return value;
  if ((ctx.revision ?? 'provisional') === 'experimental') return '';
  return status ? 'External' : undefined;
}

/** `cluster.local`, lower-cased, without a trailing dot. */
export function clusterZone(clusterDomain: string): string {
  return clusterDomain.toLowerCase().replace(/\.$/, '');
}

/**
 * A name the cluster's DNS answers only inside the cluster: the cluster
 * domain itself and every name under it (`*.svc.<domain>`, `*.pod.<domain>`,
 * the bare `svc.<domain>`), since the cluster DNS is authoritative for the zone.
 */
export function isClusterDomainHostname(value: string, clusterDomain: string): boolean {
  const name = value.toLowerCase().replace(/\.$/, '');
  const zone = clusterZone(clusterDomain);
  return name === zone || name.endsWith(`.${zone}`);
}

/** One part of an entry key: strings length-prefixed (so no two keys collide), anything else as JSON. */
function keyPart(value: unknown): string {
  if (typeof value === 'string') return `s${value.length}:${value}`;
  return `j${jsonText(value ?? null)}`;
}

/** The address an entry names, canonical for IPs (`FD00::A` is `fd00::a`). */
function canonicalValue(entry: AddressEntry): unknown {
  if (entry.type === 'IPAddress' && typeof entry.value === 'string')
    return parseIP(entry.value)?.canonical ?? entry.value;
  return entry.value;
}

/**
 * Identity used for ratcheting: effective type, the same address (IPs
 * canonical) and effective routability, so a status entry stored unset equals
 * the same entry after the mutation defaulted it.
 */
export function entryKey(entry: AddressEntry, ctx: RuleContext, status: boolean): string {
  return (
    keyPart(entry.type) + keyPart(canonicalValue(entry)) + keyPart(effectiveRoutability(entry, ctx, status))
  );
}

/** The IP of an IPAddress entry, or of a Hostname whose value is an IP literal (judged by the IP rules). */
function entryIP(entry: AddressEntry): ParsedIP | 'invalid' | undefined {
  if (typeof entry.value !== 'string')
    return entry.type === 'IPAddress' && entry.value !== undefined ? 'invalid' : undefined;
  if (entry.type === 'IPAddress') return parseIP(entry.value) ?? 'invalid';
  if (entry.type === 'Hostname') return parseIP(entry.value);
  return undefined;
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

/** A CIDR written where one address belongs gets its own hint. */
function looksLikeCidr(value: unknown): boolean {
  return typeof value === 'string' && value.includes('/') && typeof parseCidr(value) !== 'string';
}

interface ScopeOptions {
  readonly requesting: boolean;
  readonly gateway?: { namespace: string; name: string };
}

/** What the per-kind checks below share about one entry with an IP value. */
interface IPEntry {
  readonly value: string;
  readonly ip: ParsedIP;
  /** The IPv4 reading of an IPv4-mapped IPv6 value, for the message. */
  readonly readAs: string | undefined;
  readonly unset: boolean;
  /** Built only for a finding: most addresses have none. */
  readonly field: () => FieldPath;
}

/**
 * Rules for an entry that says (or, in provisional status, defaults to)
 * External or Cluster and carries a value. `requesting` is true for new spec
 * requests: they may not be satisfied from a terminating range, from reserved
 * addresses, or from an IP someone else holds.
 */
export function checkAddressScope(
  entry: AddressEntry,
  routability: { kind: WellKnown; unset?: boolean },
  ctx: RuleContext,
  options: ScopeOptions,
): Finding[] {
  const unset = routability.unset === true;
  const field = () => entry.field.child('value');
  const ip = entryIP(entry);
  if (ip === 'invalid') {
    return [
      finding('AddressValueInvalid', field(), {
        value: entry.value,
        routability: routability.kind,
        unset,
        cidr: looksLikeCidr(entry.value),
      }),
    ];
  }
  if (ip === undefined) return checkHostnameScope(entry, routability.kind, ctx, unset);
  const at: IPEntry = {
    value: entry.value as string,
    ip,
    readAs: ip.mapped ? ip.canonical : undefined,
    unset,
    field,
  };
  return routability.kind === 'External' ? checkExternalIP(at, ctx) : checkClusterIP(at, ctx, options);
}

/** A hostname says External but names a Service in the cluster's own domain. */
function checkHostnameScope(
  entry: AddressEntry,
  kind: WellKnown,
  ctx: RuleContext,
  unset: boolean,
): Finding[] {
  if (
    entry.type !== 'Hostname' ||
    typeof entry.value !== 'string' ||
    kind !== 'External' ||
    !isClusterDomainHostname(entry.value, ctx.clusterDomain)
  )
    return [];
  return [
    finding('ExternalHostnameInClusterDomain', entry.field.child('value'), {
      value: entry.value,
      domain: clusterZone(ctx.clusterDomain),
      unset,
    }),
  ];
}

function checkExternalIP(at: IPEntry, ctx: RuleContext): Finding[] {
  const containing = ctx.ranges.containing(at.ip);
  if (containing.length === 0) return [];
  return [
    finding('ExternalAddressInsideServiceRange', at.field(), {
      value: at.value,
      cidr: containing[0]!.cidr,
      unset: at.unset,
      readAs: at.readAs,
    }),
  ];
}

function checkClusterIP(at: IPEntry, ctx: RuleContext, options: ScopeOptions): Finding[] {
  const { value, ip, readAs } = at;
  const containing = ctx.ranges.containing(ip);
  const usable = options.requesting ? containing.filter((r) => !r.terminating) : containing;
  if (usable.length === 0) {
    const terminating = containing.filter((r) => r.terminating).map((r) => r.cidr);
    return [
      finding('ClusterAddressOutsideServiceRange', at.field(), {
        value,
        readAs,
        ranges: ctx.ranges.describe((r) => !options.requesting || !r.terminating),
        ...(ctx.ranges.hasFamily(ip.family, !options.requesting) ? {} : { missingFamily: ip.family }),
        ...(terminating.length > 0 ? { terminating: terminating.join(', ') } : {}),
      }),
    ];
  }
  const out: Finding[] = [];
  if (options.requesting) {
    const request = checkClusterRequest(at, usable, ctx, options.gateway);
    if (request?.final) return [request.finding];
    if (request) out.push(request.finding);
  }
  // GEP-5093: SHOULD be non-global, unless the service network itself is global.
  if (isGloballyRoutable(ip) && !usable.some(isGlobalRange))
    out.push(finding('ClusterAddressGloballyRoutable', at.field(), { value, readAs }));
  return out;
}

/**
 * A new Cluster request inside a usable range: not a reserved address, not an
 * IP another object holds. `final` findings end the entry's checks.
 */
function checkClusterRequest(
  at: IPEntry,
  usable: readonly ServiceRange[],
  ctx: RuleContext,
  gateway: ScopeOptions['gateway'],
): { finding: Finding; final: boolean } | undefined {
  const { value, ip, readAs } = at;
  // Reserved only when no usable range would hand it out (overlapping ranges may).
  const reserved = usable.map((r) => ({ r, kind: reservedKindOf(ip, r) }));
  if (reserved.every((x) => x.kind !== undefined)) {
    const first = reserved[0]!;
    const f = finding('ClusterAddressReserved', at.field(), {
      value,
      readAs,
      kind: first.kind!,
      cidr: first.r.cidr,
    });
    return { finding: f, final: true };
  }
  const holder = ctx.allocatedIPs?.holderOf(ip.canonical);
  if (holder && !isGatewayItself(holder, gateway)) {
    const f = finding('ClusterAddressAllocated', at.field(), {
      value,
      readAs,
      holder: describeHolder(holder),
    });
    return { finding: f, final: true };
  }
  const unchecked = holder ? undefined : ctx.allocatedIPs?.uncheckedReason?.(ip.canonical);
  if (unchecked === undefined) return undefined;
  return {
    finding: finding('ClusterAddressAllocationUnchecked', at.field(), { value, reason: unchecked }),
    final: false,
  };
}

function isGlobalRange(range: ServiceRange): boolean {
  return range.global;
}

function isGatewayItself(
  holder: { group: string; resource: string; namespace: string; name: string },
  gateway: { namespace: string; name: string } | undefined,
): boolean {
  return (
    gateway !== undefined &&
    holder.group === GATEWAY_API_GROUP &&
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
