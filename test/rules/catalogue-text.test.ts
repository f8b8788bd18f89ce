/**
 * The catalogue's every sentence, exactly: for each rule code and each branch
 * of its wording (hints per revision, mapped IPv4 values, unset routability,
 * terminating ranges, every inconsistent-condition problem), the field-error
 * type, the full message and the compact warning. The rule tests match
 * messages in part; a changed word, a lost hint or a swapped branch fails here.
 */
import { describe, expect, it } from 'vitest';
import { CATALOGUE, type RuleCode } from '../../src/rules/index.js';
import { clampWarning, routabilityHint, WARNING_MAX } from '../../src/rules/messages.js';

const S = 'spec.addresses[0].routability';
const V = 'spec.addresses[1].value';
const T = 'status.addresses[0].value';
const C = 'status.conditions[2].reason';

interface Row {
  readonly code: RuleCode;
  readonly field: string;
  readonly params: unknown;
  readonly type: string;
  readonly message: string;
  readonly warning: string;
}
const row = (
  code: RuleCode,
  field: string,
  params: unknown,
  type: string,
  message: string,
  warning: string,
): Row => ({ code, field, params, type, message, warning });

const ROWS: readonly Row[] = [
  row(
    'RoutabilityUnsupported',
    S,
    { value: 'cluster', reason: 'syntax', revision: 'provisional' },
    'FieldValueNotSupported',
    'spec.addresses[0].routability: Unsupported value: "cluster": supported values: "External", "Cluster", or a domain-prefixed value such as "example.com/CorpWan"; did you mean "Cluster"?',
    'spec.addresses[0].routability: routability unsupported "cluster"; did you mean "Cluster"?',
  ),
  row(
    'RoutabilityUnsupported',
    S,
    { value: 'EXTERNAL', reason: 'syntax', revision: 'provisional' },
    'FieldValueNotSupported',
    'spec.addresses[0].routability: Unsupported value: "EXTERNAL": supported values: "External", "Cluster", or a domain-prefixed value such as "example.com/CorpWan"; did you mean "External"?',
    'spec.addresses[0].routability: routability unsupported "EXTERNAL"; did you mean "External"?',
  ),
  row(
    'RoutabilityUnsupported',
    S,
    { value: 'external', reason: 'externalRemoved', revision: 'experimental' },
    'FieldValueNotSupported',
    'spec.addresses[0].routability: Unsupported value: "external": supported values: "" (the implementation\'s default), "Cluster", or a prefixed value such as "example.com/CorpWan"; upstream GEP-5093 removed "External": leave routability empty for the default',
    'spec.addresses[0].routability: routability unsupported "external"; upstream GEP-5093 removed "External": leave routability empty for the default',
  ),
  row(
    'RoutabilityUnsupported',
    S,
    { value: '', reason: 'syntax', revision: 'provisional' },
    'FieldValueNotSupported',
    'spec.addresses[0].routability: Unsupported value: "": supported values: "External", "Cluster", or a domain-prefixed value such as "example.com/CorpWan"; leave routability unset for the default (read as External)',
    'spec.addresses[0].routability: routability unsupported ""; leave routability unset for the default (read as External)',
  ),
  row(
    'RoutabilityUnsupported',
    S,
    { value: 'Public', reason: 'syntax', revision: 'provisional' },
    'FieldValueNotSupported',
    'spec.addresses[0].routability: Unsupported value: "Public": supported values: "External", "Cluster", or a domain-prefixed value such as "example.com/CorpWan"; GEP-1651\'s "Public" is "External" in GEP-5093',
    'spec.addresses[0].routability: routability unsupported "Public"; GEP-1651\'s "Public" is "External" in GEP-5093',
  ),
  row(
    'RoutabilityUnsupported',
    S,
    { value: 'public', reason: 'syntax', revision: 'experimental' },
    'FieldValueNotSupported',
    'spec.addresses[0].routability: Unsupported value: "public": supported values: "" (the implementation\'s default), "Cluster", or a prefixed value such as "example.com/CorpWan"; GEP-1651\'s "Public" has no value here: leave routability empty for the default',
    'spec.addresses[0].routability: routability unsupported "public"; GEP-1651\'s "Public" has no value here: leave routability empty for the default',
  ),
  row(
    'RoutabilityUnsupported',
    S,
    { value: 'Private', reason: 'syntax', revision: 'experimental' },
    'FieldValueNotSupported',
    'spec.addresses[0].routability: Unsupported value: "Private": supported values: "" (the implementation\'s default), "Cluster", or a prefixed value such as "example.com/CorpWan"; GEP-1651\'s "Private" has no portable equivalent: use "Cluster" for a ClusterIP, or a domain-prefixed value',
    'spec.addresses[0].routability: routability unsupported "Private"; GEP-1651\'s "Private" has no portable equivalent: use "Cluster" for a ClusterIP, or a domain-prefixed value',
  ),
  row(
    'RoutabilityUnsupported',
    S,
    { value: 'corp wan', reason: 'syntax', revision: 'experimental' },
    'FieldValueNotSupported',
    'spec.addresses[0].routability: Unsupported value: "corp wan": supported values: "" (the implementation\'s default), "Cluster", or a prefixed value such as "example.com/CorpWan"',
    'spec.addresses[0].routability: routability unsupported "corp wan"',
  ),
  row(
    'RoutabilityUnsupported',
    S,
    { value: 7, reason: 'notString', revision: 'provisional' },
    'FieldValueInvalid',
    'spec.addresses[0].routability: Invalid value: 7: must be a string: "External", "Cluster", or a domain-prefixed value such as "example.com/CorpWan"',
    'spec.addresses[0].routability: routability unsupported 7',
  ),
  row(
    'RoutabilityUnsupported',
    S,
    { value: ['Cluster'], reason: 'notString', revision: 'experimental' },
    'FieldValueInvalid',
    'spec.addresses[0].routability: Invalid value: ["Cluster"]: must be a string: "" (the implementation\'s default), "Cluster", or a prefixed value such as "example.com/CorpWan"',
    'spec.addresses[0].routability: routability unsupported ["Cluster"]',
  ),
  row(
    'RoutabilityUnsupported',
    S,
    { value: `example.com/${'x'.repeat(250)}`, reason: 'tooLong', revision: 'provisional' },
    'FieldValueTooLong',
    'spec.addresses[0].routability: Too long: may not be more than 253 characters',
    'spec.addresses[0].routability: routability longer than 253 characters',
  ),
  row(
    'RoutabilityUnsupported',
    S,
    { value: 'k8s.io/scope', reason: 'reservedPrefix', revision: 'experimental' },
    'FieldValueInvalid',
    'spec.addresses[0].routability: Invalid value: "k8s.io/scope": the prefix k8s.io and its subdomains are reserved; use a domain you own, such as "example.com/Scope"',
    'spec.addresses[0].routability: routability "k8s.io/scope" uses a reserved prefix; k8s.io and *.k8s.io are reserved',
  ),
  row(
    'RoutabilityNotAllowed',
    S,
    {
      value: 'example.com/Partner',
      allowed: ['example.com/CorpWan', 'example.com/Lab'],
      revision: 'provisional',
    },
    'FieldValueNotSupported',
    'spec.addresses[0].routability: Unsupported value: "example.com/Partner": this cluster allows only: "External", "Cluster", "example.com/CorpWan", "example.com/Lab"',
    'spec.addresses[0].routability: routability "example.com/Partner" is not on this cluster\'s allow-list',
  ),
  row(
    'RoutabilityNotAllowed',
    S,
    { value: 'example.com/Partner', allowed: [], revision: 'experimental' },
    'FieldValueNotSupported',
    'spec.addresses[0].routability: Unsupported value: "example.com/Partner": this cluster allows only: "", "Cluster"',
    'spec.addresses[0].routability: routability "example.com/Partner" is not on this cluster\'s allow-list',
  ),
  row(
    'RoutabilityTestingValue',
    S,
    { value: 'testing.x-k8s.io/unsupported' },
    'FieldValueNotSupported',
    'spec.addresses[0].routability: Unsupported value: "testing.x-k8s.io/unsupported": testing.x-k8s.io values other than "testing.x-k8s.io/sentinel" exist for conformance tests; implementations leave the entry unsatisfied',
    'spec.addresses[0].routability: test value "testing.x-k8s.io/unsupported" will be left unsatisfied by implementations',
  ),
  row(
    'AddressesMalformed',
    'spec.addresses[0]',
    { value: 'Cluster', expected: 'an object with type, value and routability' },
    'FieldValueInvalid',
    'spec.addresses[0]: Invalid value: "Cluster": must be an object with type, value and routability',
    'spec.addresses[0]: must be an object with type, value and routability',
  ),
  row(
    'AddressesTooMany',
    'status.addresses',
    { count: 17, max: 16 },
    'FieldValueTooMany',
    'status.addresses: Too many: 17: must have at most 16 items',
    'status.addresses: 17 entries, more than the 16 the Gateway CRD allows',
  ),
  row(
    'AddressValueInvalid',
    V,
    { value: '10.96.0.0/24', routability: 'Cluster', unset: false, cidr: true },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "10.96.0.0/24": is a range, not an address: give one address of it (routability Cluster checks a single IP)',
    'spec.addresses[1].value: "10.96.0.0/24" is a range, not an address',
  ),
  row(
    'AddressValueInvalid',
    V,
    { value: '10.96.0.0/24', routability: 'External', unset: true, cidr: true },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "10.96.0.0/24": is a range, not an address: give one address of it (routability unset (read as External) checks a single IP)',
    'spec.addresses[1].value: "10.96.0.0/24" is a range, not an address',
  ),
  row(
    'AddressValueInvalid',
    V,
    { value: '10.096.0.10', routability: 'Cluster', unset: false, cidr: false },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "10.096.0.10": must be a valid IPv4 or IPv6 address (no leading zeros, no zone) for routability Cluster',
    'spec.addresses[1].value: "10.096.0.10" is not a valid IP address',
  ),
  row(
    'AddressValueInvalid',
    V,
    { value: 'fe80::1%eth0', routability: 'External', unset: true, cidr: false },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "fe80::1%eth0": must be a valid IPv4 or IPv6 address (no leading zeros, no zone) for routability unset (read as External)',
    'spec.addresses[1].value: "fe80::1%eth0" is not a valid IP address',
  ),
  row(
    'ClusterAddressOutsideServiceRange',
    V,
    { value: '10.0.0.5', ranges: '10.96.0.0/12' },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "10.0.0.5": routability Cluster requires an address inside the service range (10.96.0.0/12)',
    'spec.addresses[1].value: Cluster address "10.0.0.5" is outside the service range',
  ),
  row(
    'ClusterAddressOutsideServiceRange',
    V,
    { value: '::ffff:10.0.0.5', readAs: '10.0.0.5', ranges: '10.96.0.0/12', missingFamily: 'IPv6' },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "::ffff:10.0.0.5": read as IPv4 10.0.0.5: routability Cluster requires an address inside the service range (10.96.0.0/12), and the cluster has no IPv6 service range',
    'spec.addresses[1].value: Cluster address "::ffff:10.0.0.5" (read as IPv4 10.0.0.5) is outside the service range',
  ),
  row(
    'ClusterAddressOutsideServiceRange',
    T,
    { value: '10.100.0.5', ranges: '10.96.0.0/16', terminating: '10.100.0.0/16' },
    'FieldValueInvalid',
    'status.addresses[0].value: Invalid value: "10.100.0.5": routability Cluster requires an address inside the service range (10.96.0.0/16); 10.100.0.0/16 is being deleted and takes no new addresses',
    'status.addresses[0].value: Cluster address "10.100.0.5" is only in 10.100.0.0/16, which is being deleted',
  ),
  row(
    'ClusterAddressReserved',
    V,
    { value: '10.96.0.0', kind: 'network', cidr: '10.96.0.0/12' },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "10.96.0.0": is the network address of service range 10.96.0.0/12, which is never allocated; choose another address in the range',
    'spec.addresses[1].value: "10.96.0.0" is the network address of 10.96.0.0/12',
  ),
  row(
    'ClusterAddressReserved',
    V,
    { value: '::ffff:10.111.255.255', readAs: '10.111.255.255', kind: 'broadcast', cidr: '10.96.0.0/12' },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "::ffff:10.111.255.255": read as IPv4 10.111.255.255, it is the broadcast address of service range 10.96.0.0/12, which is never allocated; choose another address in the range',
    'spec.addresses[1].value: "::ffff:10.111.255.255" (read as IPv4 10.111.255.255) is the broadcast address of 10.96.0.0/12',
  ),
  row(
    'ClusterAddressAllocated',
    V,
    { value: '10.96.0.10', holder: 'services/kube-system/kube-dns' },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "10.96.0.10": already allocated to services/kube-system/kube-dns',
    'spec.addresses[1].value: "10.96.0.10" is already allocated to services/kube-system/kube-dns',
  ),
  row(
    'ClusterAddressAllocated',
    V,
    { value: '::ffff:10.96.0.10', readAs: '10.96.0.10', holder: 'services/apps/web' },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "::ffff:10.96.0.10": read as IPv4 10.96.0.10, it is already allocated to services/apps/web',
    'spec.addresses[1].value: "::ffff:10.96.0.10" (read as IPv4 10.96.0.10) is already allocated to services/apps/web',
  ),
  row(
    'ClusterAddressAllocationUnchecked',
    V,
    { value: '10.96.0.10', reason: 'no answer from the API server within 1 s' },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "10.96.0.10": allowed without checking whether another object holds it (no answer from the API server within 1 s)',
    'spec.addresses[1].value: allocation of "10.96.0.10" not checked (no answer from the API server within 1 s)',
  ),
  row(
    'ClusterAddressAllocationUnchecked',
    V,
    { value: '10.96.0.10', reason: `forbidden: ${'r'.repeat(100)}` },
    'FieldValueInvalid',
    `spec.addresses[1].value: Invalid value: "10.96.0.10": allowed without checking whether another object holds it (forbidden: ${'r'.repeat(69)})`,
    `spec.addresses[1].value: allocation of "10.96.0.10" not checked (forbidden: ${'r'.repeat(39)})`,
  ),
  row(
    'ExternalAddressInsideServiceRange',
    T,
    { value: '10.96.0.42', cidr: '10.96.0.0/12', unset: true },
    'FieldValueInvalid',
    'status.addresses[0].value: Invalid value: "10.96.0.42": routability unset (read as External) requires an address outside the service range (10.96.0.0/12); use routability Cluster for a ClusterIP',
    'status.addresses[0].value: "10.96.0.42" is inside service range 10.96.0.0/12, with routability unset (read as External)',
  ),
  row(
    'ExternalAddressInsideServiceRange',
    V,
    { value: '::ffff:10.96.0.42', readAs: '10.96.0.42', cidr: '10.96.0.0/12', unset: false },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "::ffff:10.96.0.42": read as IPv4 10.96.0.42: routability External requires an address outside the service range (10.96.0.0/12); use routability Cluster for a ClusterIP',
    'spec.addresses[1].value: "::ffff:10.96.0.42" (read as IPv4 10.96.0.42) is inside service range 10.96.0.0/12, with routability External',
  ),
  row(
    'ExternalHostnameInClusterDomain',
    V,
    { value: 'gw.apps.svc.cluster.local', domain: 'cluster.local', unset: false },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "gw.apps.svc.cluster.local": routability External cannot use a name in the cluster DNS domain cluster.local, which resolves only inside the cluster; use routability Cluster',
    'spec.addresses[1].value: hostname is in the cluster domain cluster.local, with routability External',
  ),
  row(
    'ExternalHostnameInClusterDomain',
    T,
    { value: 'gw.apps.svc.cluster.local', domain: 'cluster.local', unset: true },
    'FieldValueInvalid',
    'status.addresses[0].value: Invalid value: "gw.apps.svc.cluster.local": routability unset (read as External) cannot use a name in the cluster DNS domain cluster.local, which resolves only inside the cluster; use routability Cluster',
    'status.addresses[0].value: hostname is in the cluster domain cluster.local, with routability unset (read as External)',
  ),
  row(
    'RoutabilityMismatch',
    'status.addresses[0].routability',
    { routability: 'External', unset: false, requestedBy: 'spec.addresses[0]', requested: ['Cluster'] },
    'FieldValueInvalid',
    'status.addresses[0].routability: Invalid value: "External": spec.addresses[0] requested routability Cluster for this address; an implementation must not substitute a different scope',
    'status.addresses[0].routability: External substitutes the Cluster that spec.addresses[0] requested',
  ),
  row(
    'RoutabilityMismatch',
    'status.addresses[0].routability',
    {
      routability: 'External',
      unset: true,
      requestedBy: 'spec.addresses[1]',
      requested: ['Cluster', 'example.com/CorpWan'],
    },
    'FieldValueRequired',
    'status.addresses[0].routability: Required value: routability unset (read as External), but spec.addresses[1] requested routability Cluster or example.com/CorpWan for this address; an implementation must not substitute a different scope',
    'status.addresses[0].routability: routability unset (read as External) substitutes the Cluster or example.com/CorpWan that spec.addresses[1] requested',
  ),
  row(
    'RoutabilityMismatch',
    'status.addresses[0].routability',
    { routability: 'Cluster', unset: false, requested: ['External', 'example.com/CorpWan'] },
    'FieldValueInvalid',
    'status.addresses[0].routability: Invalid value: "Cluster": no spec address requests routability Cluster (requested: External, example.com/CorpWan); an implementation must not substitute a different scope',
    'status.addresses[0].routability: Cluster was not requested (spec asks for External, example.com/CorpWan)',
  ),
  row(
    'RoutabilityMismatch',
    'status.addresses[0].routability',
    { routability: '""', unset: true, requested: ['Cluster'] },
    'FieldValueRequired',
    'status.addresses[0].routability: Required value: routability unset (read as ""), but no spec address requests routability "" (requested: Cluster); an implementation must not substitute a different scope',
    'status.addresses[0].routability: routability unset (read as "") was not requested (spec asks for Cluster)',
  ),
  row(
    'AddressesAssignedInconsistent',
    C,
    { problem: 'pair', status: 'True', reason: 'PartiallyAssigned', success: 'Assigned' },
    'FieldValueInvalid',
    'status.conditions[2].reason: Invalid value: "PartiallyAssigned": condition AddressesAssigned with status "True" must be True/Assigned, False/PartiallyAssigned or False/NotAssigned',
    'status.conditions[2].reason: AddressesAssigned "True"/"PartiallyAssigned" is not a valid pair',
  ),
  row(
    'AddressesAssignedInconsistent',
    C,
    { problem: 'programmed', programmed: 'True/Programmed' },
    'FieldValueInvalid',
    'status.conditions[2].reason: Invalid value: "NotAssigned": AddressesAssigned=False/NotAssigned requires condition Programmed=False with reason AddressNotAssigned (found True/Programmed)',
    'status.conditions[2].reason: NotAssigned needs Programmed=False/AddressNotAssigned (found True/Programmed)',
  ),
  row(
    'AddressesAssignedInconsistent',
    'status.conditions[2].message',
    { problem: 'message' },
    'FieldValueRequired',
    'status.conditions[2].message: Required value: AddressesAssigned=False/PartiallyAssigned must list the unsatisfied address entries in its message',
    'status.conditions[2].message: PartiallyAssigned needs a message listing the unsatisfied entries',
  ),
  row(
    'AddressesAssignedInconsistent',
    C,
    { problem: 'partialProgrammed', programmed: 'False/Invalid' },
    'FieldValueInvalid',
    'status.conditions[2].reason: Invalid value: AddressesAssigned=False/PartiallyAssigned means the Gateway is programmed with the addresses it could satisfy, so Programmed must be True (found False/Invalid)',
    'status.conditions[2].reason: PartiallyAssigned needs Programmed=True (found False/Invalid)',
  ),
  row(
    'AddressesAssignedInconsistent',
    C,
    { problem: 'unmatched', entry: 'spec.addresses[1]', success: 'AddressesAssigned' },
    'FieldValueInvalid',
    'status.conditions[2].reason: Invalid value: "True": AddressesAssigned=True/AddressesAssigned requires a status address satisfying every spec entry, and spec.addresses[1] has none',
    'status.conditions[2].reason: AddressesAssigned=True, but no status address satisfies spec.addresses[1]',
  ),
  row(
    'AddressesAssignedInconsistent',
    T,
    { problem: 'satisfied', requestedBy: 'spec.addresses[0]' },
    'FieldValueForbidden',
    'status.addresses[0].value: Forbidden: AddressesAssigned=False/NotAssigned, yet this address satisfies spec.addresses[0]; with nothing assigned, no status address may satisfy a request',
    'status.addresses[0].value: satisfies spec.addresses[0] although AddressesAssigned is NotAssigned',
  ),
  row(
    'ClusterAddressGloballyRoutable',
    V,
    { value: '11.0.0.10' },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "11.0.0.10": a Cluster address SHOULD NOT be globally routable unless the service range itself is (GEP-5093)',
    'spec.addresses[1].value: Cluster address "11.0.0.10" is globally routable; GEP-5093 says it SHOULD NOT be',
  ),
  row(
    'ClusterAddressGloballyRoutable',
    V,
    { value: '::ffff:11.0.0.10', readAs: '11.0.0.10' },
    'FieldValueInvalid',
    'spec.addresses[1].value: Invalid value: "::ffff:11.0.0.10": read as IPv4 11.0.0.10: a Cluster address SHOULD NOT be globally routable unless the service range itself is (GEP-5093)',
    'spec.addresses[1].value: Cluster address "::ffff:11.0.0.10" (read as IPv4 11.0.0.10) is globally routable; GEP-5093 says it SHOULD NOT be',
  ),
  row(
    'StatusDefaultedExternal',
    'status.addresses[0]',
    { value: '10.96.0.42', why: 'range' },
    'FieldValueInvalid',
    'status.addresses[0]: Invalid value: "10.96.0.42": routability was defaulted to External, but the address is inside the service range; report routability Cluster',
    'status.addresses[0]: routability defaulted to External, but "10.96.0.42" is in the service range',
  ),
  row(
    'StatusDefaultedExternal',
    'status.addresses[1]',
    { value: 'gw.apps.svc.cluster.local', why: 'hostname' },
    'FieldValueInvalid',
    'status.addresses[1]: Invalid value: "gw.apps.svc.cluster.local": routability was defaulted to External, but the address is a name in the cluster DNS domain; report routability Cluster',
    'status.addresses[1]: routability defaulted to External, but "gw.apps.svc.cluster.local" is a cluster-domain name',
  ),
  row(
    'UnchangedEntryRatcheted',
    'spec.addresses[0]',
    { problem: 'Cluster address "10.96.0.10" is outside the service range', more: 0 },
    'FieldValueInvalid',
    'spec.addresses[0]: Invalid value: unchanged entry allowed, although now: Cluster address "10.96.0.10" is outside the service range; it is checked in full when it changes',
    'spec.addresses[0]: unchanged, so allowed, although now: Cluster address "10.96.0.10" is outside the service range',
  ),
  row(
    'UnchangedEntryRatcheted',
    'spec.addresses[0]',
    { problem: 'Cluster address "10.96.0.10" is outside the service range', more: 2 },
    'FieldValueInvalid',
    'spec.addresses[0]: Invalid value: unchanged entry allowed, although now: Cluster address "10.96.0.10" is outside the service range (and 2 more); it is checked in full when it changes',
    'spec.addresses[0]: unchanged, so allowed, although now: Cluster address "10.96.0.10" is outside the service range',
  ),
];

describe('the catalogue, word for word', () => {
  it.each(ROWS.map((r, i) => [`${r.code} #${i}`, r] as const))('%s', (_name, r) => {
    const entry = CATALOGUE[r.code] as unknown as {
      parts: (p: unknown) => { type: string };
      message: (field: string, p: unknown) => string;
      warning: (field: string, p: unknown) => string;
    };
    expect(entry.parts(r.params).type).toBe(r.type);
    expect(entry.message(r.field, r.params)).toBe(r.message);
    expect(entry.warning(r.field, r.params)).toBe(r.warning);
  });

  it('has a row for every code', () => {
    expect(new Set(ROWS.map((r) => r.code))).toEqual(new Set(Object.keys(CATALOGUE)));
  });

  it('a hint without a revision is the provisional one', () => {
    expect(routabilityHint('public')).toBe('GEP-1651\'s "Public" is "External" in GEP-5093');
    expect(routabilityHint('scope')).toBeUndefined();
  });
});

describe('clampWarning', () => {
  const w = (n: number) => 'w'.repeat(n);

  it(`leaves a warning of exactly ${WARNING_MAX} characters alone`, () => {
    const text = `a: ${w(117)}`;
    expect(text).toHaveLength(WARNING_MAX);
    expect(clampWarning(text)).toBe(text);
  });

  it('cuts at the last word boundary that fits, then "..."', () => {
    const words = `a: ${w(20)} ${w(20)} ${w(20)} ${w(20)} ${w(20)} ${w(20)}`;
    expect(clampWarning(words)).toBe(`a: ${w(20)} ${w(20)} ${w(20)} ${w(20)} ${w(20)}...`);
  });

  it('cuts inside a word only when the last boundary is in the first half', () => {
    expect(clampWarning(`a: ${w(10)} ${w(130)}`)).toBe(`a: ${w(10)} ${w(103)}...`);
    expect(clampWarning(`a: ${w(55)} ${w(70)}`)).toBe(`a: ${w(55)} ${w(58)}...`);
  });

  it('keeps a hint of up to half the budget whole, cutting the text before it', () => {
    const hint = `; ${w(58)}`;
    expect(clampWarning(`a: ${w(20)} ${w(20)} ${w(20)} ${w(20)}${hint}`)).toBe(
      `a: ${w(20)} ${w(20)}...${hint}`,
    );
    // The room left is 58 characters; a boundary at exactly half of it (29) is too early.
    const hint59 = `; ${w(57)}`;
    expect(clampWarning(`a: ${w(26)} ${w(70)}${hint59}`)).toBe(`a: ${w(26)} ${w(28)}...${hint59}`);
  });

  it('treats a longer hint as text', () => {
    const text = `a: ${w(20)} ${w(20)} ${w(20)} ${w(20)}; ${w(59)}`;
    expect(clampWarning(text)).toBe(`a: ${w(20)} ${w(20)} ${w(20)} ${w(20)};...`);
  });
});
