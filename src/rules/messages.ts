/**
 * The single catalogue of user-facing text: every rule code, its full
 * Kubernetes field-error message and its compact warning (≤ 120 characters).
 * docs/messages.md documents each code; a test keeps the two in sync.
 */
import {
  NO_VALUE,
  quote,
  renderFieldErrorBody,
  type ErrorType,
  type FieldErrorParts,
} from './field-error.js';
import type { IPFamily } from './ip.js';
import type { GepRevision } from './revision.js';

/** The CRD's maxLength for routability (both revisions). */
const ROUTABILITY_MAX = 253;

export { quote };

/** `invalid`: denied under every policy (the CRD refuses it too); `violation`: per policy; `warning`: never denies. */
export type Severity = 'invalid' | 'violation' | 'warning';

/** An IPv4-mapped IPv6 value is judged as the IPv4 address it carries; `readAs` names it. */
interface IPValue {
  value: string;
  readAs?: string | undefined;
}

interface Params {
  RoutabilityUnsupported: {
    value: unknown;
    reason: 'syntax' | 'tooLong' | 'notString' | 'externalRemoved' | 'reservedPrefix';
    revision: GepRevision;
  };
  RoutabilityNotAllowed: { value: string; allowed: readonly string[]; revision: GepRevision };
  RoutabilityTestingValue: { value: string };
  AddressesMalformed: { value: unknown; expected: string };
  AddressesTooMany: { count: number; max: number };
  AddressValueInvalid: { value: unknown; routability: string; unset: boolean; cidr: boolean };
  ClusterAddressOutsideServiceRange: IPValue & {
    ranges: string;
    missingFamily?: IPFamily;
    terminating?: string;
  };
  ClusterAddressReserved: IPValue & { kind: 'network' | 'broadcast'; cidr: string };
  ClusterAddressAllocated: IPValue & { holder: string };
  ClusterAddressAllocationUnchecked: { value: string; reason: string };
  ExternalAddressInsideServiceRange: IPValue & { cidr: string; unset: boolean };
  ExternalHostnameInClusterDomain: { value: string; domain: string; unset: boolean };
  RoutabilityMismatch: {
    /** The status routability as read (`External` for a provisional unset, `""` for an experimental one). */
    routability: string;
    unset: boolean;
    requestedBy?: string;
    requested: readonly string[];
  };
  AddressesAssignedInconsistent:
    | { problem: 'pair'; status: string; reason: string; success: string }
    | { problem: 'programmed'; programmed: string }
    | { problem: 'message' }
    | { problem: 'partialProgrammed'; programmed: string }
    | { problem: 'unmatched'; entry: string; success: string }
    | { problem: 'satisfied'; requestedBy: string };
  ClusterAddressGloballyRoutable: IPValue;
  StatusDefaultedExternal: { value: string; why: 'range' | 'hostname' };
  UnchangedEntryRatcheted: { problem: string; more: number };
}

export type RuleCode = keyof Params;
export type ParamsOf<C extends RuleCode> = Params[C];

interface EntrySpec<P> {
  readonly severity: Severity;
  /** One sentence: what the rule finds, whatever the values (the rule description of `--output sarif`). */
  readonly summary: string;
  /** Where the rule runs. */
  readonly lists: readonly ('spec' | 'status')[];
  /** The Kubernetes field-error type (`field.ErrorType`); also `details.causes[].reason`. */
  readonly type: ErrorType | ((p: P) => ErrorType);
  /** The offending value shown after the type, or NO_VALUE. */
  readonly value: (p: P) => unknown;
  /** Longest value text shown (default 256 characters). */
  readonly valueMax?: number;
  /** What is wrong and what to do, after the value. */
  readonly detail: (p: P) => string;
  /** The compact form used as an admission warning. */
  readonly warning: (field: string, p: P) => string;
  /** One rendering for docs/messages.md and its sync test. */
  readonly example: { readonly field: string; readonly params: P };
}

export interface Entry<P> extends EntrySpec<P> {
  /** The field-error parts of one finding. */
  readonly parts: (p: P) => FieldErrorParts;
  /** The full field-error sentence, without the apiserver's "denied the request" prefix. */
  readonly message: (field: string, p: P) => string;
}

/** Completes a catalogue entry with its one rendering of the field error. */
function rule<P>(spec: EntrySpec<P>): Entry<P> {
  const typeOf = spec.type;
  const parts = (p: P): FieldErrorParts => ({
    type: typeof typeOf === 'function' ? typeOf(p) : typeOf,
    value: spec.value(p),
    detail: spec.detail(p),
    valueMax: spec.valueMax,
  });
  return { ...spec, parts, message: (field, p) => `${field}: ${renderFieldErrorBody(parts(p))}` };
}

/** Shortens a value for a warning line. */
function short(value: unknown): string {
  return quote(value, 40);
}

const SUPPORTED: Readonly<Record<GepRevision, string>> = {
  provisional: '"External", "Cluster", or a domain-prefixed value such as "example.com/CorpWan"',
  experimental: `"" (the implementation's default), "Cluster", or a prefixed value such as "example.com/CorpWan"`,
};

/** Help for the slips people really make: case, GEP-1651's Public/Private, and values a revision removed. */
export function routabilityHint(value: string, revision: GepRevision = 'provisional'): string | undefined {
  const lower = value.toLowerCase();
  const experimental = revision === 'experimental';
  if (lower === 'cluster') return 'did you mean "Cluster"?';
  if (lower === 'external')
    return experimental
      ? 'upstream GEP-5093 removed "External": leave routability empty for the default'
      : 'did you mean "External"?';
  if (value === '') return 'leave routability unset for the default (read as External)';
  if (lower === 'public')
    return experimental
      ? 'GEP-1651\'s "Public" has no value here: leave routability empty for the default'
      : 'GEP-1651\'s "Public" is "External" in GEP-5093';
  if (lower === 'private')
    return 'GEP-1651\'s "Private" has no portable equivalent: use "Cluster" for a ClusterIP, or a domain-prefixed value';
  return undefined;
}

/** The one wording for a routability that is unset, in messages and warnings alike. */
const UNSET = 'routability unset (read as External)';
const routabilityPhrase = (unset: boolean) => (unset ? UNSET : 'routability External');

/** ` (read as IPv4 10.96.0.5)` after a mapped IPv6 value; nothing otherwise. */
const readAsText = (p: IPValue) => (p.readAs ? ` (read as IPv4 ${p.readAs})` : '');

/** Keeps a warning within the budget the apiserver passes on intact. */
export const WARNING_MAX = 120;
const ELLIPSIS = '...';

/** Cuts before `max` characters at a word boundary (mid-word only for a single very long word). */
function cutAtWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const space = text.lastIndexOf(' ', max);
  return text.slice(0, space > max / 2 ? space : max);
}

/**
 * Shortens a warning to WARNING_MAX characters: at a word boundary, and with
 * its hint (the part after the last `; `) kept whole when the hint is short
 * enough to leave room for the rest.
 */
export function clampWarning(text: string): string {
  if (text.length <= WARNING_MAX) return text;
  const cut = text.lastIndexOf('; ');
  const hint = cut > 0 ? text.slice(cut) : '';
  if (hint !== '' && hint.length <= WARNING_MAX / 2)
    return cutAtWord(text.slice(0, cut), WARNING_MAX - hint.length - ELLIPSIS.length) + ELLIPSIS + hint;
  return cutAtWord(text, WARNING_MAX - ELLIPSIS.length) + ELLIPSIS;
}

export const CATALOGUE: { readonly [C in RuleCode]: Entry<Params[C]> } = {
  RoutabilityUnsupported: rule<Params['RoutabilityUnsupported']>({
    severity: 'invalid',
    summary: 'The routability value is not one the GEP-5093 revision supports.',
    lists: ['spec', 'status'],
    type: (p) =>
      p.reason === 'tooLong'
        ? 'FieldValueTooLong'
        : p.reason === 'notString' || p.reason === 'reservedPrefix'
          ? 'FieldValueInvalid'
          : 'FieldValueNotSupported',
    value: (p) => p.value,
    detail: (p) => {
      if (p.reason === 'tooLong') return `may not be more than ${ROUTABILITY_MAX} characters`;
      if (p.reason === 'notString') return `must be a string: ${SUPPORTED[p.revision]}`;
      if (p.reason === 'reservedPrefix')
        return 'the prefix k8s.io and its subdomains are reserved; use a domain you own, such as "example.com/Scope"';
      const hint = typeof p.value === 'string' ? routabilityHint(p.value, p.revision) : undefined;
      return `supported values: ${SUPPORTED[p.revision]}${hint ? `; ${hint}` : ''}`;
    },
    warning: (field, p) => {
      if (p.reason === 'tooLong') return `${field}: routability longer than ${ROUTABILITY_MAX} characters`;
      if (p.reason === 'reservedPrefix')
        return `${field}: routability ${short(p.value)} uses a reserved prefix; k8s.io and *.k8s.io are reserved`;
      const hint = typeof p.value === 'string' ? routabilityHint(p.value, p.revision) : undefined;
      return `${field}: routability unsupported ${short(p.value)}${hint ? `; ${hint}` : ''}`;
    },
    example: {
      field: 'spec.addresses[0].routability',
      params: { value: 'cluster', reason: 'syntax', revision: 'provisional' },
    },
  }),
  RoutabilityNotAllowed: rule<Params['RoutabilityNotAllowed']>({
    severity: 'violation',
    summary: "The domain-prefixed routability value is not on this cluster's allow-list.",
    lists: ['spec'],
    type: 'FieldValueNotSupported',
    value: (p) => p.value,
    detail: (p) =>
      `this cluster allows only: ${[...(p.revision === 'experimental' ? ['', 'Cluster'] : ['External', 'Cluster']), ...p.allowed].map((v) => quote(v)).join(', ')}`,
    warning: (field, p) => `${field}: routability ${short(p.value)} is not on this cluster's allow-list`,
    example: {
      field: 'spec.addresses[0].routability',
      params: { value: 'example.com/Partner', allowed: ['example.com/CorpWan'], revision: 'provisional' },
    },
  }),
  RoutabilityTestingValue: rule<Params['RoutabilityTestingValue']>({
    severity: 'warning',
    summary: 'A testing.x-k8s.io routability value that implementations must leave unsatisfied.',
    lists: ['spec'],
    type: 'FieldValueNotSupported',
    value: (p) => p.value,
    detail: () =>
      'testing.x-k8s.io values other than "testing.x-k8s.io/sentinel" exist for conformance tests; implementations leave the entry unsatisfied',
    warning: (field, p) =>
      `${field}: test value ${short(p.value)} will be left unsatisfied by implementations`,
    example: { field: 'spec.addresses[0].routability', params: { value: 'testing.x-k8s.io/unsupported' } },
  }),
  AddressesMalformed: rule<Params['AddressesMalformed']>({
    severity: 'violation',
    summary: 'The addresses field is not a list of objects.',
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    valueMax: 64,
    detail: (p) => `must be ${p.expected}`,
    warning: (field, p) => `${field}: must be ${p.expected}`,
    example: {
      field: 'spec.addresses[0]',
      params: { value: 'Cluster', expected: 'an object with type, value and routability' },
    },
  }),
  AddressesTooMany: rule<Params['AddressesTooMany']>({
    severity: 'invalid',
    summary: 'The addresses list has more entries than the Gateway CRD allows.',
    lists: ['spec', 'status'],
    type: 'FieldValueTooMany',
    value: (p) => p.count,
    detail: (p) => `must have at most ${p.max} items`,
    warning: (field, p) => `${field}: ${p.count} entries, more than the ${p.max} the Gateway CRD allows`,
    example: { field: 'status.addresses', params: { count: 100000, max: 16 } },
  }),
  AddressValueInvalid: rule<Params['AddressValueInvalid']>({
    severity: 'violation',
    summary: 'An IPAddress entry with a routability has a value that is not an IP address.',
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) =>
      p.cidr
        ? `is a range, not an address: give one address of it (routability ${p.unset ? 'unset (read as External)' : p.routability} checks a single IP)`
        : `must be a valid IPv4 or IPv6 address (no leading zeros, no zone) for ${p.unset ? UNSET : `routability ${p.routability}`}`,
    warning: (field, p) =>
      p.cidr
        ? `${field}: ${short(p.value)} is a range, not an address`
        : `${field}: ${short(p.value)} is not a valid IP address`,
    example: {
      field: 'spec.addresses[0].value',
      params: { value: '10.096.0.10', routability: 'Cluster', unset: false, cidr: false },
    },
  }),
  ClusterAddressOutsideServiceRange: rule<Params['ClusterAddressOutsideServiceRange']>({
    severity: 'violation',
    summary: 'A Cluster address is outside every service range of the cluster.',
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) => {
      let detail = `routability Cluster requires an address inside the service range (${p.ranges})`;
      if (p.readAs) detail = `read as IPv4 ${p.readAs}: ${detail}`;
      if (p.missingFamily) detail += `, and the cluster has no ${p.missingFamily} service range`;
      if (p.terminating) detail += `; ${p.terminating} is being deleted and takes no new addresses`;
      return detail;
    },
    warning: (field, p) =>
      p.terminating
        ? `${field}: Cluster address ${short(p.value)}${readAsText(p)} is only in ${p.terminating}, which is being deleted`
        : `${field}: Cluster address ${short(p.value)}${readAsText(p)} is outside the service range`,
    example: {
      field: 'spec.addresses[1].value',
      params: { value: '10.0.0.5', ranges: '10.96.0.0/12, fd00:10:96::/112' },
    },
  }),
  ClusterAddressReserved: rule<Params['ClusterAddressReserved']>({
    severity: 'violation',
    summary: 'A Cluster address is the network or broadcast address of its service range.',
    lists: ['spec'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) =>
      `${p.readAs ? `read as IPv4 ${p.readAs}, it ` : ''}is the ${p.kind} address of service range ${p.cidr}, which is never allocated; choose another address in the range`,
    warning: (field, p) =>
      `${field}: ${short(p.value)}${readAsText(p)} is the ${p.kind} address of ${p.cidr}`,
    example: {
      field: 'spec.addresses[0].value',
      params: { value: '10.96.0.0', kind: 'network', cidr: '10.96.0.0/12' },
    },
  }),
  ClusterAddressAllocated: rule<Params['ClusterAddressAllocated']>({
    severity: 'violation',
    summary: 'A Cluster address is already allocated to another object.',
    lists: ['spec'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) => `${p.readAs ? `read as IPv4 ${p.readAs}, it is ` : ''}already allocated to ${p.holder}`,
    warning: (field, p) => `${field}: ${short(p.value)}${readAsText(p)} is already allocated to ${p.holder}`,
    example: {
      field: 'spec.addresses[0].value',
      params: { value: '10.96.0.10', holder: 'services/kube-system/kube-dns' },
    },
  }),
  ClusterAddressAllocationUnchecked: rule<Params['ClusterAddressAllocationUnchecked']>({
    severity: 'warning',
    summary: 'Whether a Cluster address is already allocated could not be checked.',
    lists: ['spec'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) => `allowed without checking whether another object holds it (${p.reason.slice(0, 80)})`,
    warning: (field, p) => `${field}: allocation of ${short(p.value)} not checked (${p.reason.slice(0, 50)})`,
    example: {
      field: 'spec.addresses[0].value',
      params: { value: '10.96.0.10', reason: 'no answer from the API server within 1 s' },
    },
  }),
  ExternalAddressInsideServiceRange: rule<Params['ExternalAddressInsideServiceRange']>({
    severity: 'violation',
    summary: 'An External address is inside a service range, where only the cluster reaches it.',
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) =>
      `${p.readAs ? `read as IPv4 ${p.readAs}: ` : ''}${routabilityPhrase(p.unset)} requires an address outside the service range (${p.cidr}); use routability Cluster for a ClusterIP`,
    warning: (field, p) =>
      `${field}: ${short(p.value)}${readAsText(p)} is inside service range ${p.cidr}, with ${routabilityPhrase(p.unset)}`,
    example: {
      field: 'status.addresses[0].value',
      params: { value: '10.96.0.42', cidr: '10.96.0.0/12', unset: true },
    },
  }),
  ExternalHostnameInClusterDomain: rule<Params['ExternalHostnameInClusterDomain']>({
    severity: 'violation',
    summary: 'An External hostname is in the cluster DNS domain.',
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) =>
      `${routabilityPhrase(p.unset)} cannot use a name in the cluster DNS domain ${p.domain}, which resolves only inside the cluster; use routability Cluster`,
    warning: (field, p) =>
      `${field}: hostname is in the cluster domain ${p.domain}, with ${routabilityPhrase(p.unset)}`,
    example: {
      field: 'spec.addresses[0].value',
      params: { value: 'gw.apps.svc.cluster.local', domain: 'cluster.local', unset: false },
    },
  }),
  RoutabilityMismatch: rule<Params['RoutabilityMismatch']>({
    severity: 'violation',
    summary: 'A status address has a routability that spec did not request.',
    lists: ['status'],
    // An unset routability is a missing value in Kubernetes' terms.
    type: (p) => (p.unset ? 'FieldValueRequired' : 'FieldValueInvalid'),
    value: (p) => p.routability,
    detail: (p) => {
      const requested = p.requestedBy
        ? `${p.requestedBy} requested routability ${p.requested.join(' or ')} for this address`
        : `no spec address requests routability ${p.routability} (requested: ${p.requested.join(', ')})`;
      const unset = p.unset ? `routability unset (read as ${p.routability}), but ` : '';
      return `${unset}${requested}; an implementation must not substitute a different scope`;
    },
    warning: (field, p) => {
      const reported = p.unset ? `routability unset (read as ${p.routability})` : p.routability;
      return p.requestedBy
        ? `${field}: ${reported} substitutes the ${p.requested.join(' or ')} that ${p.requestedBy} requested`
        : `${field}: ${reported} was not requested (spec asks for ${p.requested.join(', ')})`;
    },
    example: {
      field: 'status.addresses[0].routability',
      params: {
        routability: 'External',
        unset: false,
        requestedBy: 'spec.addresses[0]',
        requested: ['Cluster'],
      },
    },
  }),
  AddressesAssignedInconsistent: rule<Params['AddressesAssignedInconsistent']>({
    severity: 'violation',
    summary: 'The AddressesAssigned condition disagrees with the addresses in status.',
    lists: ['status'],
    type: (p) =>
      p.problem === 'message'
        ? 'FieldValueRequired'
        : p.problem === 'satisfied'
          ? 'FieldValueForbidden'
          : 'FieldValueInvalid',
    value: (p) => {
      switch (p.problem) {
        case 'pair':
          return p.reason;
        case 'programmed':
          return 'NotAssigned';
        case 'unmatched':
          return 'True';
        default:
          return NO_VALUE;
      }
    },
    detail: (p) => {
      switch (p.problem) {
        case 'pair':
          return `condition AddressesAssigned with status ${quote(p.status)} must be True/${p.success}, False/PartiallyAssigned or False/NotAssigned`;
        case 'programmed':
          return `AddressesAssigned=False/NotAssigned requires condition Programmed=False with reason AddressNotAssigned (found ${p.programmed})`;
        case 'message':
          return 'AddressesAssigned=False/PartiallyAssigned must list the unsatisfied address entries in its message';
        case 'partialProgrammed':
          return `AddressesAssigned=False/PartiallyAssigned means the Gateway is programmed with the addresses it could satisfy, so Programmed must be True (found ${p.programmed})`;
        case 'unmatched':
          return `AddressesAssigned=True/${p.success} requires a status address satisfying every spec entry, and ${p.entry} has none`;
        case 'satisfied':
          return `AddressesAssigned=False/NotAssigned, yet this address satisfies ${p.requestedBy}; with nothing assigned, no status address may satisfy a request`;
      }
    },
    warning: (field, p) => {
      switch (p.problem) {
        case 'pair':
          return `${field}: AddressesAssigned ${short(p.status)}/${short(p.reason)} is not a valid pair`;
        case 'programmed':
          return `${field}: NotAssigned needs Programmed=False/AddressNotAssigned (found ${p.programmed})`;
        case 'message':
          return `${field}: PartiallyAssigned needs a message listing the unsatisfied entries`;
        case 'partialProgrammed':
          return `${field}: PartiallyAssigned needs Programmed=True (found ${p.programmed})`;
        case 'unmatched':
          return `${field}: AddressesAssigned=True, but no status address satisfies ${p.entry}`;
        case 'satisfied':
          return `${field}: satisfies ${p.requestedBy} although AddressesAssigned is NotAssigned`;
      }
    },
    example: {
      field: 'status.conditions[2].reason',
      params: { problem: 'pair', status: 'True', reason: 'PartiallyAssigned', success: 'Assigned' },
    },
  }),
  ClusterAddressGloballyRoutable: rule<Params['ClusterAddressGloballyRoutable']>({
    severity: 'warning',
    summary: 'A Cluster address is globally routable although the service range is not.',
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) =>
      `${p.readAs ? `read as IPv4 ${p.readAs}: ` : ''}a Cluster address SHOULD NOT be globally routable unless the service range itself is (GEP-5093)`,
    warning: (field, p) =>
      `${field}: Cluster address ${short(p.value)}${readAsText(p)} is globally routable; GEP-5093 says it SHOULD NOT be`,
    // 10.0.0.0/7 holds private 10/8 and public 11/8: the range is not global as a whole.
    example: { field: 'spec.addresses[0].value', params: { value: '11.0.0.10' } },
  }),
  StatusDefaultedExternal: rule<Params['StatusDefaultedExternal']>({
    severity: 'warning',
    summary: 'A status address was defaulted to External although it looks like a Cluster address.',
    lists: ['status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) =>
      `routability was defaulted to External, but the address ${p.why === 'range' ? 'is inside the service range' : 'is a name in the cluster DNS domain'}; report routability Cluster`,
    warning: (field, p) =>
      `${field}: routability defaulted to External, but ${short(p.value)} ${p.why === 'range' ? 'is in the service range' : 'is a cluster-domain name'}`,
    example: { field: 'status.addresses[0]', params: { value: '10.96.0.42', why: 'range' } },
  }),
  UnchangedEntryRatcheted: rule<Params['UnchangedEntryRatcheted']>({
    severity: 'warning',
    summary: 'An unchanged address entry that breaks a rule was allowed on update (ratcheting).',
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: () => NO_VALUE,
    detail: (p) =>
      `unchanged entry allowed, although now: ${p.problem}${p.more > 0 ? ` (and ${p.more} more)` : ''}; it is checked in full when it changes`,
    warning: (field, p) => `${field}: unchanged, so allowed, although now: ${p.problem}`,
    example: {
      field: 'spec.addresses[0]',
      params: { problem: 'Cluster address "10.96.0.10" is outside the service range', more: 0 },
    },
  }),
};

export const RULE_CODES = Object.keys(CATALOGUE) as RuleCode[];
