/** The status-rule table: test/rules/status-rules.test.ts runs it on the engine, test/policy on the generated policy. */
import type { RuleContext } from '../../../src/rules/types.js';
import { ranges, type Address } from '../../kit/gateways.js';

export interface Row {
  name: string;
  spec?: Address[];
  status?: Address[];
  conditions?: Address[];
  want: string[];
  notices?: string[];
  ctx?: Partial<RuleContext>;
}

export const S0 = 'status.addresses[0]';
export const programmedFalse = { type: 'Programmed', status: 'False', reason: 'AddressNotAssigned' };

export const rows: Row[] = [
  { name: 'honest Cluster', status: [{ value: '10.96.0.42', routability: 'Cluster' }], want: [] },
  { name: 'honest External', status: [{ value: '203.0.113.10', routability: 'External' }], want: [] },
  { name: 'unset outside range (read as External)', status: [{ value: '203.0.113.10' }], want: [] },
  {
    name: 'Cluster outside range is a lie',
    status: [{ value: '192.168.7.7', routability: 'Cluster' }],
    want: [`ClusterAddressOutsideServiceRange@${S0}.value`],
  },
  {
    name: 'External inside range',
    status: [{ value: '10.96.0.42', routability: 'External' }],
    want: [`ExternalAddressInsideServiceRange@${S0}.value`],
  },
  {
    name: 'unset inside range means External inside range',
    status: [{ value: '10.96.0.42' }],
    want: [`ExternalAddressInsideServiceRange@${S0}.value`],
  },
  {
    name: 'unset IPv6 inside range',
    status: [{ value: 'fd00:10:96::42' }],
    want: [`ExternalAddressInsideServiceRange@${S0}.value`],
  },
  {
    name: 'status Cluster inside a terminating range is still Cluster',
    status: [{ value: '10.200.0.5', routability: 'Cluster' }],
    ctx: { ranges: ranges('10.96.0.0/12', { cidr: '10.200.0.0/16', terminating: true }) },
    want: [],
  },
  {
    name: 'status network address is not checked for reservation',
    status: [{ value: '10.96.0.0', routability: 'Cluster' }],
    want: [],
  },
  {
    name: 'unset cluster-domain hostname',
    status: [{ type: 'Hostname', value: 'gw.apps.svc.cluster.local' }],
    want: [`ExternalHostnameInClusterDomain@${S0}.value`],
  },
  {
    name: 'malformed status routability',
    status: [{ value: '10.96.0.42', routability: 'cluster' }],
    want: [`RoutabilityUnsupported@${S0}.routability`],
  },
  {
    name: 'domain-prefixed status is opaque',
    status: [{ value: '10.96.0.42', routability: 'example.com/Internal' }],
    want: [],
  },
  {
    name: 'NamedAddress in status is opaque',
    status: [{ type: 'NamedAddress', value: 'lb-1' }],
    want: [],
  },
  {
    name: 'public Cluster status address in a global service range: no warning',
    status: [{ value: '8.8.0.9', routability: 'Cluster' }],
    ctx: { ranges: ranges('8.8.0.0/16') },
    want: [],
  },
  {
    name: 'public Cluster status address in a non-global range warns',
    status: [{ value: '11.0.0.9', routability: 'Cluster' }],
    ctx: { ranges: ranges('10.0.0.0/7') },
    want: [],
    notices: [`ClusterAddressGloballyRoutable@${S0}.value`],
  },

  // Substitution (RoutabilityMismatch).
  {
    name: 'value requested as Cluster reported External',
    spec: [{ value: '10.96.0.42', routability: 'Cluster' }],
    status: [{ value: '10.96.0.42', routability: 'External' }],
    want: [`ExternalAddressInsideServiceRange@${S0}.value`, `RoutabilityMismatch@${S0}.routability`],
  },
  {
    name: 'value requested with another spelling is the same address',
    spec: [{ value: 'fd00:10:96:0::42', routability: 'Cluster' }],
    status: [{ value: 'fd00:10:96::42', routability: 'Cluster' }],
    want: [],
  },
  {
    name: 'every spec entry names Cluster, status reports External',
    spec: [{ routability: 'Cluster' }],
    status: [{ value: '203.0.113.10', routability: 'External' }],
    want: [`RoutabilityMismatch@${S0}.routability`],
  },
  {
    name: 'every spec entry names Cluster, status unset (External)',
    spec: [{ routability: 'Cluster' }],
    status: [{ value: '203.0.113.10' }],
    want: [`RoutabilityMismatch@${S0}.routability`],
  },
  {
    name: 'one spec entry without routability lets anything through',
    spec: [{ routability: 'Cluster' }, { type: 'IPAddress' }],
    status: [{ value: '203.0.113.10', routability: 'External' }],
    want: [],
  },
  {
    name: 'mixed request satisfied',
    spec: [{ routability: 'Cluster' }, { routability: 'External' }],
    status: [
      { value: '10.96.0.42', routability: 'Cluster' },
      { value: '203.0.113.10', routability: 'External' },
    ],
    want: [],
  },
  {
    name: 'no spec addresses: any scope may be reported',
    status: [{ value: '10.96.0.42', routability: 'Cluster' }],
    want: [],
  },

  {
    name: 'the first spec entry for a value decides, not a later one',
    spec: [
      { value: '203.0.113.10', routability: 'External' },
      { value: '203.0.113.10', routability: 'Cluster' },
    ],
    status: [{ value: '203.0.113.10', routability: 'External' }],
    want: [],
  },
  {
    name: 'a later status entry substitutes (the field is its own)',
    spec: [{ value: '203.0.113.10', routability: 'External' }, { routability: 'Cluster' }],
    status: [
      { value: '10.96.0.42', routability: 'Cluster' },
      { value: '203.0.113.10', routability: 'Cluster' },
    ],
    want: [
      'ClusterAddressOutsideServiceRange@status.addresses[1].value',
      'RoutabilityMismatch@status.addresses[1].routability',
    ],
  },
  {
    name: 'hostname requested in other case with a trailing dot is the same name',
    spec: [{ type: 'Hostname', value: 'GW.Example.com.', routability: 'External' }],
    status: [{ type: 'Hostname', value: 'gw.example.com', routability: 'example.com/CorpWan' }],
    want: [`RoutabilityMismatch@${S0}.routability`],
  },
  {
    name: 'a named address matches by type and value as written',
    spec: [{ type: 'example.com/pool', value: 'Blue', routability: 'Cluster' }],
    status: [
      { type: 'example.com/pool', value: 'blue', routability: 'Cluster' },
      { type: 'example.com/pool', value: 'Blue', routability: 'External' },
    ],
    want: ['RoutabilityMismatch@status.addresses[1].routability'],
  },
  {
    name: 'a value requested without routability is not a request for that value',
    spec: [{ value: '203.0.113.10' }, { routability: 'Cluster' }],
    status: [{ value: '203.0.113.10', routability: 'External' }],
    want: [],
  },
  {
    name: 'a status routability with bad syntax is only RoutabilityUnsupported',
    spec: [{ routability: 'Cluster' }],
    status: [{ value: '203.0.113.10', routability: 'bad value' }],
    want: [`RoutabilityUnsupported@${S0}.routability`],
  },
  {
    name: 'experimental: an unset request accepts "" and Cluster',
    spec: [{ value: '10.96.0.42' }],
    status: [{ value: '10.96.0.42', routability: 'Cluster' }, { value: '203.0.113.10' }],
    want: [],
    ctx: { revision: 'experimental' },
  },
  {
    name: 'experimental: a value requested unset reported prefixed',
    spec: [{ value: '203.0.113.10' }],
    status: [{ value: '203.0.113.10', routability: 'example.com/CorpWan' }],
    want: [`RoutabilityMismatch@${S0}.routability`],
    ctx: { revision: 'experimental' },
  },
  {
    name: 'experimental: status unset ("") when every spec entry names Cluster',
    spec: [{ routability: 'Cluster' }],
    status: [{ value: '203.0.113.10' }],
    want: [`RoutabilityMismatch@${S0}.routability`],
    ctx: { revision: 'experimental' },
  },
  {
    name: 'experimental: a prefixed request is met only by the same prefix',
    spec: [{ routability: 'example.com/CorpWan' }],
    status: [
      { value: '203.0.113.10', routability: 'example.com/CorpWan' },
      { value: '203.0.113.11', routability: 'example.com/Other' },
    ],
    want: ['RoutabilityMismatch@status.addresses[1].routability'],
    ctx: { revision: 'experimental' },
  },
  {
    name: 'experimental: no spec addresses: any scope may be reported',
    status: [{ value: '203.0.113.10', routability: 'example.com/CorpWan' }],
    want: [],
    ctx: { revision: 'experimental' },
  },
  {
    name: 'mismatch under --status-policy warn warns (no violation; test/policy compares the warning)',
    spec: [{ routability: 'Cluster' }],
    status: [{ value: '203.0.113.10', routability: 'External' }],
    want: [],
    ctx: { statusPolicy: 'warn' },
  },

  // AddressesAssigned consistency.
  {
    name: 'True/Assigned',
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'Assigned' }],
    want: [],
  },
  {
    name: 'False/PartiallyAssigned with message',
    conditions: [
      {
        type: 'AddressesAssigned',
        status: 'False',
        reason: 'PartiallyAssigned',
        message: 'spec.addresses[1]',
      },
    ],
    want: [],
  },
  {
    name: 'False/PartiallyAssigned without message',
    conditions: [{ type: 'AddressesAssigned', status: 'False', reason: 'PartiallyAssigned', message: ' ' }],
    want: ['AddressesAssignedInconsistent@status.conditions[0].message'],
  },
  {
    name: 'False/NotAssigned with Programmed=False/AddressNotAssigned',
    conditions: [programmedFalse, { type: 'AddressesAssigned', status: 'False', reason: 'NotAssigned' }],
    want: [],
  },
  {
    name: 'False/NotAssigned while Programmed=True',
    conditions: [
      { type: 'Programmed', status: 'True', reason: 'Programmed' },
      { type: 'AddressesAssigned', status: 'False', reason: 'NotAssigned' },
    ],
    want: ['AddressesAssignedInconsistent@status.conditions[1]'],
  },
  {
    name: 'False/NotAssigned with no Programmed condition',
    conditions: [{ type: 'AddressesAssigned', status: 'False', reason: 'NotAssigned' }],
    want: ['AddressesAssignedInconsistent@status.conditions[0]'],
  },
  {
    name: 'True/PartiallyAssigned is no valid pair',
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'PartiallyAssigned' }],
    want: ['AddressesAssignedInconsistent@status.conditions[0].reason'],
  },
  {
    name: 'False/Assigned is no valid pair',
    conditions: [{ type: 'AddressesAssigned', status: 'False', reason: 'Assigned' }],
    want: ['AddressesAssignedInconsistent@status.conditions[0].reason'],
  },
  {
    name: 'Unknown/Pending is no valid pair',
    conditions: [{ type: 'AddressesAssigned', status: 'Unknown', reason: 'Pending' }],
    want: ['AddressesAssignedInconsistent@status.conditions[0].reason'],
  },
  {
    name: 'no AddressesAssigned condition',
    conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
    want: [],
  },
  {
    name: 'True/Assigned with a spec entry no status address satisfies',
    spec: [{ value: '203.0.113.10', routability: 'External' }, { routability: 'Cluster' }],
    status: [{ value: '203.0.113.10', routability: 'External' }],
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'Assigned' }],
    want: ['AddressesAssignedInconsistent@status.conditions[0].status'],
  },
  {
    name: 'True/Assigned when status reports another value than spec requested',
    spec: [{ value: '203.0.113.10', routability: 'External' }],
    status: [{ value: '203.0.113.11', routability: 'External' }],
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'Assigned' }],
    want: ['AddressesAssignedInconsistent@status.conditions[0].status'],
  },
  {
    name: 'True/Assigned with every spec entry satisfied (hostname by its lower-case name)',
    spec: [{ type: 'Hostname', value: 'GW.example.com.' }, { routability: 'Cluster' }],
    status: [
      { type: 'Hostname', value: 'gw.example.com' },
      { value: '10.96.0.42', routability: 'Cluster' },
    ],
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'Assigned' }],
    want: [],
  },
  {
    name: 'False/PartiallyAssigned while Programmed=False',
    conditions: [
      {
        type: 'AddressesAssigned',
        status: 'False',
        reason: 'PartiallyAssigned',
        message: 'spec.addresses[1]',
      },
      programmedFalse,
    ],
    want: ['AddressesAssignedInconsistent@status.conditions[1].status'],
  },
  {
    name: 'False/NotAssigned yet a status address satisfies a request',
    spec: [{ routability: 'Cluster' }],
    status: [
      { value: '203.0.113.10', routability: 'External' },
      { value: '10.96.0.42', routability: 'Cluster' },
    ],
    conditions: [programmedFalse, { type: 'AddressesAssigned', status: 'False', reason: 'NotAssigned' }],
    want: [
      'RoutabilityMismatch@status.addresses[0].routability',
      'AddressesAssignedInconsistent@status.addresses[1]',
    ],
  },
  {
    name: 'experimental: True/AddressesAssigned is the success pair',
    spec: [{ value: '10.96.0.42' }],
    status: [{ value: '10.96.0.42', routability: 'Cluster' }],
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'AddressesAssigned' }],
    want: [],
    ctx: { revision: 'experimental' },
  },
  {
    name: 'experimental: True/Assigned is no valid pair',
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'Assigned' }],
    want: ['AddressesAssignedInconsistent@status.conditions[0].reason'],
    ctx: { revision: 'experimental' },
  },
  {
    name: 'experimental: True/AddressesAssigned with a prefixed request unmet',
    spec: [{ routability: 'example.com/CorpWan' }],
    status: [{ value: '203.0.113.10' }],
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'AddressesAssigned' }],
    want: [
      'RoutabilityMismatch@status.addresses[0].routability',
      'AddressesAssignedInconsistent@status.conditions[0].status',
    ],
    ctx: { revision: 'experimental' },
  },
  {
    name: 'an inconsistent pair under --status-policy warn warns (no violation)',
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'PartiallyAssigned' }],
    want: [],
    ctx: { statusPolicy: 'warn' },
  },
];
