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

export { quote };

export const WELL_KNOWN_ROUTABILITY = ['External', 'Cluster'] as const;

interface Params {
  RoutabilityUnsupported: { value: unknown; reason: 'syntax' | 'tooLong' | 'notString' };
  RoutabilityNotAllowed: { value: string; allowed: readonly string[] };
  AddressesMalformed: { value: unknown; expected: string };
  AddressValueInvalid: { value: unknown; routability: string };
  ClusterAddressOutsideServiceRange: {
    value: string;
    ranges: string;
    missingFamily?: IPFamily;
    terminating?: string;
  };
  ClusterAddressReserved: { value: string; kind: 'network' | 'broadcast'; cidr: string };
  ClusterAddressAllocated: { value: string; holder: string };
  ClusterAddressAllocationUnchecked: { value: string; reason: string };
  ExternalAddressInsideServiceRange: { value: string; cidr: string; unset: boolean };
  ExternalHostnameInClusterDomain: { value: string; suffix: string; unset: boolean };
  RoutabilityMismatch: {
    routability: string;
    unset: boolean;
    requestedBy?: string;
    requested: readonly string[];
  };
  AddressesAssignedInconsistent:
    | { problem: 'pair'; status: string; reason: string }
    | { problem: 'programmed'; programmed: string }
    | { problem: 'message' };
  ClusterAddressGloballyRoutable: { value: string };
  StatusDefaultedExternal: { value: string; why: 'range' | 'hostname' };
  UnchangedEntryRatcheted: { codes: readonly string[] };
}

export type RuleCode = keyof Params;
export type ParamsOf<C extends RuleCode> = Params[C];

interface EntrySpec<P> {
  /** `violation`: denies (or warns, per policy); `warning`: never denies. */
  readonly severity: 'violation' | 'warning';
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

const SUPPORTED = '"External", "Cluster", or a domain-prefixed value such as "example.com/CorpWan"';

/** Help for the slips people really make: case, and GEP-1651's Public/Private. */
export function routabilityHint(value: string): string | undefined {
  const lower = value.toLowerCase();
  for (const known of WELL_KNOWN_ROUTABILITY)
    if (lower === known.toLowerCase()) return `did you mean "${known}"?`;
  if (lower === 'public') return 'GEP-1651\'s "Public" is "External" in GEP-5093';
  if (lower === 'private')
    return 'GEP-1651\'s "Private" has no portable equivalent: use "Cluster" for a ClusterIP, or a domain-prefixed value';
  return undefined;
}

/** GEP-5093 reads an unset status routability as External; say which one the user has. */
function externalPhrase(unset: boolean): string {
  return unset ? 'routability unset (read as External)' : 'routability External';
}

/** Keeps a warning within the budget the apiserver passes on intact. */
export const WARNING_MAX = 120;
export function clampWarning(text: string): string {
  return text.length <= WARNING_MAX ? text : `${text.slice(0, WARNING_MAX - 3)}...`;
}

export const CATALOGUE: { readonly [C in RuleCode]: Entry<Params[C]> } = {
  RoutabilityUnsupported: rule<Params['RoutabilityUnsupported']>({
    severity: 'violation',
    lists: ['spec', 'status'],
    type: (p) =>
      p.reason === 'tooLong'
        ? 'FieldValueTooLong'
        : p.reason === 'notString'
          ? 'FieldValueInvalid'
          : 'FieldValueNotSupported',
    value: (p) => p.value,
    detail: (p) => {
      if (p.reason === 'tooLong') return 'may not be more than 253 bytes';
      if (p.reason === 'notString') return `must be a string: ${SUPPORTED}`;
      const hint = typeof p.value === 'string' ? routabilityHint(p.value) : undefined;
      return `supported values: ${SUPPORTED}${hint ? `; ${hint}` : ''}`;
    },
    warning: (field, p) => {
      const hint = typeof p.value === 'string' ? routabilityHint(p.value) : undefined;
      const what = p.reason === 'tooLong' ? 'longer than 253 bytes' : `unsupported ${short(p.value)}`;
      return `${field}: routability ${what}${hint ? `; ${hint}` : ''}`;
    },
    example: { field: 'spec.addresses[0].routability', params: { value: 'cluster', reason: 'syntax' } },
  }),
  RoutabilityNotAllowed: rule<Params['RoutabilityNotAllowed']>({
    severity: 'violation',
    lists: ['spec'],
    type: 'FieldValueNotSupported',
    value: (p) => p.value,
    detail: (p) =>
      `this cluster allows only: ${['External', 'Cluster', ...p.allowed].map((v) => quote(v)).join(', ')}`,
    warning: (field, p) => `${field}: routability ${short(p.value)} is not on this cluster's allow-list`,
    example: {
      field: 'spec.addresses[0].routability',
      params: { value: 'example.com/Partner', allowed: ['example.com/CorpWan'] },
    },
  }),
  AddressesMalformed: rule<Params['AddressesMalformed']>({
    severity: 'violation',
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
  AddressValueInvalid: rule<Params['AddressValueInvalid']>({
    severity: 'violation',
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) =>
      `must be a valid IPv4 or IPv6 address (no leading zeros, no zone) for routability ${p.routability}`,
    warning: (field, p) => `${field}: ${short(p.value)} is not a valid IP address`,
    example: { field: 'spec.addresses[0].value', params: { value: '10.096.0.10', routability: 'Cluster' } },
  }),
  ClusterAddressOutsideServiceRange: rule<Params['ClusterAddressOutsideServiceRange']>({
    severity: 'violation',
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) => {
      let detail = `routability Cluster requires an address inside the service range (${p.ranges})`;
      if (p.missingFamily) detail += `, and the cluster has no ${p.missingFamily} service range`;
      if (p.terminating) detail += `; ${p.terminating} is being deleted and takes no new addresses`;
      return detail;
    },
    warning: (field, p) =>
      p.terminating
        ? `${field}: Cluster address ${short(p.value)} is only in ${p.terminating}, which is being deleted`
        : `${field}: Cluster address ${short(p.value)} is outside the service range`,
    example: {
      field: 'spec.addresses[1].value',
      params: { value: '10.0.0.5', ranges: '10.96.0.0/12, fd00:10:96::/112' },
    },
  }),
  ClusterAddressReserved: rule<Params['ClusterAddressReserved']>({
    severity: 'violation',
    lists: ['spec'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) =>
      `is the ${p.kind} address of service range ${p.cidr}, which is never allocated; choose another address in the range`,
    warning: (field, p) => `${field}: ${short(p.value)} is the ${p.kind} address of ${p.cidr}`,
    example: {
      field: 'spec.addresses[0].value',
      params: { value: '10.96.0.0', kind: 'network', cidr: '10.96.0.0/12' },
    },
  }),
  ClusterAddressAllocated: rule<Params['ClusterAddressAllocated']>({
    severity: 'violation',
    lists: ['spec'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) => `already allocated to ${p.holder}`,
    warning: (field, p) => `${field}: ${short(p.value)} is already allocated to ${p.holder}`,
    example: {
      field: 'spec.addresses[0].value',
      params: { value: '10.96.0.10', holder: 'services/kube-system/kube-dns' },
    },
  }),
  ClusterAddressAllocationUnchecked: rule<Params['ClusterAddressAllocationUnchecked']>({
    severity: 'warning',
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
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) =>
      `${externalPhrase(p.unset)} requires an address outside the service range (${p.cidr}); use routability Cluster for a ClusterIP`,
    warning: (field, p) =>
      `${field}: External${p.unset ? ' (unset)' : ''} address ${short(p.value)} is inside service range ${p.cidr}`,
    example: {
      field: 'status.addresses[0].value',
      params: { value: '10.96.0.42', cidr: '10.96.0.0/12', unset: true },
    },
  }),
  ExternalHostnameInClusterDomain: rule<Params['ExternalHostnameInClusterDomain']>({
    severity: 'violation',
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) =>
      `${externalPhrase(p.unset)} cannot use a hostname under ${p.suffix}, which resolves only inside the cluster; use routability Cluster`,
    warning: (field, p) => `${field}: External${p.unset ? ' (unset)' : ''} hostname is under ${p.suffix}`,
    example: {
      field: 'spec.addresses[0].value',
      params: { value: 'gw.apps.svc.cluster.local', suffix: '.svc.cluster.local', unset: false },
    },
  }),
  RoutabilityMismatch: rule<Params['RoutabilityMismatch']>({
    severity: 'violation',
    lists: ['status'],
    type: 'FieldValueInvalid',
    value: (p) => (p.unset ? NO_VALUE : p.routability),
    detail: (p) => {
      const requested = p.requestedBy
        ? `${p.requestedBy} requested routability ${p.requested.join(', ')} for this address`
        : `no spec address requests routability ${p.routability} (requested: ${p.requested.join(', ')})`;
      const unset = p.unset ? 'null (unset, read as External): ' : '';
      return `${unset}${requested}; an implementation must not substitute a different scope`;
    },
    warning: (field, p) =>
      p.requestedBy
        ? `${field}: ${p.routability} substitutes the ${p.requested.join(', ')} that ${p.requestedBy} requested`
        : `${field}: ${p.routability} was not requested (spec asks for ${p.requested.join(', ')})`,
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
    lists: ['status'],
    type: (p) => (p.problem === 'message' ? 'FieldValueRequired' : 'FieldValueInvalid'),
    value: (p) => (p.problem === 'pair' ? p.reason : p.problem === 'programmed' ? 'NotAssigned' : NO_VALUE),
    detail: (p) => {
      switch (p.problem) {
        case 'pair':
          return `condition AddressesAssigned with status ${quote(p.status)} must be True/Assigned, False/PartiallyAssigned or False/NotAssigned`;
        case 'programmed':
          return `AddressesAssigned=False/NotAssigned requires condition Programmed=False with reason AddressNotAssigned (found ${p.programmed})`;
        case 'message':
          return 'AddressesAssigned=False/PartiallyAssigned must list the unsatisfied address entries in its message';
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
      }
    },
    example: {
      field: 'status.conditions[2].reason',
      params: { problem: 'pair', status: 'True', reason: 'PartiallyAssigned' },
    },
  }),
  ClusterAddressGloballyRoutable: rule<Params['ClusterAddressGloballyRoutable']>({
    severity: 'warning',
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: () => 'a Cluster address SHOULD NOT be globally routable (GEP-5093)',
    warning: (field, p) =>
      `${field}: Cluster address ${short(p.value)} is globally routable; GEP-5093 says it SHOULD NOT be`,
    example: { field: 'spec.addresses[0].value', params: { value: '34.118.224.10' } },
  }),
  StatusDefaultedExternal: rule<Params['StatusDefaultedExternal']>({
    severity: 'warning',
    lists: ['status'],
    type: 'FieldValueInvalid',
    value: (p) => p.value,
    detail: (p) =>
      `routability was defaulted to External, but the address ${p.why === 'range' ? 'is inside the service range' : 'is a cluster-domain hostname'}; report routability Cluster`,
    warning: (field, p) =>
      `${field}: routability defaulted to External, but ${short(p.value)} ${p.why === 'range' ? 'is in the service range' : 'is a cluster-domain name'}`,
    example: { field: 'status.addresses[0]', params: { value: '10.96.0.42', why: 'range' } },
  }),
  UnchangedEntryRatcheted: rule<Params['UnchangedEntryRatcheted']>({
    severity: 'warning',
    lists: ['spec', 'status'],
    type: 'FieldValueInvalid',
    value: () => NO_VALUE,
    detail: (p) =>
      `unchanged entry allowed although it now fails ${p.codes.join(', ')}; it will be checked when it changes`,
    warning: (field, p) => `${field}: unchanged, so allowed, but it now fails ${p.codes.join(', ')}`,
    example: { field: 'spec.addresses[0]', params: { codes: ['ClusterAddressOutsideServiceRange'] } },
  }),
};

export const RULE_CODES = Object.keys(CATALOGUE) as RuleCode[];
