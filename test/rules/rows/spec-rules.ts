/** The spec-rule table (one address on the base Gateway per row): test/rules/spec-rules.test.ts runs it on the engine, test/policy on the generated policy. */
import type { RuleContext } from '../../../src/rules/types.js';
import { ranges, type Address } from '../../kit/gateways.js';

export const long = (n: number) => `example.com/${'a'.repeat(n - 'example.com/'.length)}`;

export interface Row {
  name: string;
  address: Address;
  want: string[]; // CODE@field of denying findings
  notices?: string[];
  ctx?: Partial<RuleContext>;
}

export const A0 = 'spec.addresses[0]';

export const rows: Row[] = [
  // Entries the engine must never reject.
  {
    name: 'no routability: implementation picks',
    address: { type: 'IPAddress', value: '8.8.8.8' },
    want: [],
  },
  { name: 'value-less Cluster request', address: { type: 'IPAddress', routability: 'Cluster' }, want: [] },
  { name: 'value-less External request', address: { routability: 'External' }, want: [] },
  {
    name: 'NamedAddress is opaque',
    address: { type: 'NamedAddress', value: 'my-lb', routability: 'Cluster' },
    want: [],
  },
  {
    name: 'domain-prefixed type is opaque',
    address: { type: 'test/fake-invalid-type', value: 'whatever', routability: 'External' },
    want: [],
  },
  { name: 'null routability means unset', address: { value: '10.0.0.1', routability: null }, want: [] },

  // Syntax.
  { name: 'Cluster', address: { value: '10.96.0.10', routability: 'Cluster' }, want: [] },
  { name: 'External', address: { value: '203.0.113.10', routability: 'External' }, want: [] },
  { name: 'domain-prefixed', address: { value: '10.0.0.1', routability: 'example.com/CorpWan' }, want: [] },
  {
    name: 'case slip cluster',
    address: { routability: 'cluster' },
    want: [`RoutabilityUnsupported@${A0}.routability`],
  },
  {
    name: 'case slip EXTERNAL',
    address: { routability: 'EXTERNAL' },
    want: [`RoutabilityUnsupported@${A0}.routability`],
  },
  {
    name: 'GEP-1651 Public',
    address: { routability: 'Public' },
    want: [`RoutabilityUnsupported@${A0}.routability`],
  },
  {
    name: 'GEP-1651 Private',
    address: { routability: 'Private' },
    want: [`RoutabilityUnsupported@${A0}.routability`],
  },
  { name: 'empty string', address: { routability: '' }, want: [`RoutabilityUnsupported@${A0}.routability`] },
  { name: 'number', address: { routability: 5 }, want: [`RoutabilityUnsupported@${A0}.routability`] },
  {
    name: 'anchoring: ClusterFoo is not Cluster',
    address: { routability: 'ClusterFoo' },
    want: [`RoutabilityUnsupported@${A0}.routability`],
  },
  {
    name: 'anchoring: prefix junk',
    address: { routability: 'xExternal' },
    want: [`RoutabilityUnsupported@${A0}.routability`],
  },
  {
    name: 'uppercase domain',
    address: { routability: 'Example.com/X' },
    want: [`RoutabilityUnsupported@${A0}.routability`],
  },
  { name: '253 characters', address: { routability: long(253) }, want: [] },
  {
    name: '254 characters',
    address: { routability: long(254) },
    want: [`RoutabilityUnsupported@${A0}.routability`],
  },

  // Allow-list.
  {
    name: 'allow-list: listed',
    address: { routability: 'example.com/CorpWan' },
    ctx: { allowedRoutability: new Set(['example.com/CorpWan']) },
    want: [],
  },
  {
    name: 'allow-list: not listed',
    address: { routability: 'example.com/Partner' },
    ctx: { allowedRoutability: new Set(['example.com/CorpWan']) },
    want: [`RoutabilityNotAllowed@${A0}.routability`],
  },
  {
    name: 'allow-list never limits well-known values',
    address: { value: '10.96.0.1', routability: 'Cluster' },
    ctx: { allowedRoutability: new Set(['example.com/CorpWan']) },
    want: [],
  },

  // Cluster: IPv4 range edges.
  { name: 'Cluster first usable', address: { value: '10.96.0.1', routability: 'Cluster' }, want: [] },
  { name: 'Cluster last usable', address: { value: '10.111.255.254', routability: 'Cluster' }, want: [] },
  {
    name: 'Cluster network address',
    address: { value: '10.96.0.0', routability: 'Cluster' },
    want: [`ClusterAddressReserved@${A0}.value`],
  },
  {
    name: 'Cluster broadcast address',
    address: { value: '10.111.255.255', routability: 'Cluster' },
    want: [`ClusterAddressReserved@${A0}.value`],
  },
  {
    name: 'Cluster just past the range',
    address: { value: '10.112.0.0', routability: 'Cluster' },
    want: [`ClusterAddressOutsideServiceRange@${A0}.value`],
  },
  {
    name: 'Cluster just before the range',
    address: { value: '10.95.255.255', routability: 'Cluster' },
    want: [`ClusterAddressOutsideServiceRange@${A0}.value`],
  },
  // Cluster: IPv6 and spellings.
  { name: 'Cluster IPv6 inside', address: { value: 'fd00:10:96::a', routability: 'Cluster' }, want: [] },
  {
    name: 'Cluster IPv6 non-canonical spelling inside',
    address: { value: 'FD00:0010:0096:0:0:0:0:00ff', routability: 'Cluster' },
    want: [],
  },
  {
    name: 'Cluster IPv6 last address is usable',
    address: { value: 'fd00:10:96::ffff', routability: 'Cluster' },
    want: [],
  },
  {
    name: 'Cluster IPv6 network address',
    address: { value: 'fd00:10:96::', routability: 'Cluster' },
    want: [`ClusterAddressReserved@${A0}.value`],
  },
  {
    name: 'Cluster IPv6 outside',
    address: { value: 'fd00:10:97::1', routability: 'Cluster' },
    want: [`ClusterAddressOutsideServiceRange@${A0}.value`],
  },
  {
    name: 'Cluster IPv4-mapped IPv6 inside (read as IPv4, as Go does)',
    address: { value: '::ffff:10.96.0.20', routability: 'Cluster' },
    want: [],
  },
  {
    name: 'Cluster IPv4-mapped IPv6 outside',
    address: { value: '::ffff:192.168.0.1', routability: 'Cluster' },
    want: [`ClusterAddressOutsideServiceRange@${A0}.value`],
  },
  {
    name: 'Cluster wrong family on a single-stack cluster',
    address: { value: 'fd00:10:96::a', routability: 'Cluster' },
    ctx: { ranges: ranges('10.96.0.0/12') },
    want: [`ClusterAddressOutsideServiceRange@${A0}.value`],
  },
  {
    name: 'Cluster leading zeros are no IP',
    address: { value: '010.96.0.1', routability: 'Cluster' },
    want: [`AddressValueInvalid@${A0}.value`],
  },
  {
    name: 'Cluster zone is no IP',
    address: { value: 'fe80::1%eth0', routability: 'Cluster' },
    want: [`AddressValueInvalid@${A0}.value`],
  },
  {
    name: 'Cluster number value',
    address: { value: 42, routability: 'Cluster' },
    want: [`AddressValueInvalid@${A0}.value`],
  },
  {
    name: 'Cluster outside a public service range',
    address: { value: '203.0.113.7', routability: 'Cluster' },
    ctx: { ranges: ranges('8.8.0.0/16') },
    want: [`ClusterAddressOutsideServiceRange@${A0}.value`],
  },
  {
    name: 'Cluster in a service range that is itself global: no warning (GEP exception)',
    address: { value: '8.8.0.10', routability: 'Cluster' },
    ctx: { ranges: ranges('8.8.0.0/16') },
    want: [],
  },
  {
    name: 'Cluster in an IPv6 GUA service network: no warning',
    address: { value: '2001:470:1::10', routability: 'Cluster' },
    ctx: { ranges: ranges('2001:470:1::/112') },
    want: [],
  },
  {
    name: 'Cluster global address in a range that is not itself global: warning',
    address: { value: '11.0.0.10', routability: 'Cluster' },
    ctx: { ranges: ranges('10.0.0.0/7') },
    want: [],
    notices: [`ClusterAddressGloballyRoutable@${A0}.value`],
  },
  {
    name: 'Cluster hostname is not checked',
    address: { type: 'Hostname', value: 'gw.example.com', routability: 'Cluster' },
    want: [],
  },

  // Terminating ranges.
  {
    name: 'Cluster only inside a terminating range',
    address: { value: '10.200.0.5', routability: 'Cluster' },
    ctx: { ranges: ranges('10.96.0.0/12', { cidr: '10.200.0.0/16', terminating: true }) },
    want: [`ClusterAddressOutsideServiceRange@${A0}.value`],
  },
  {
    name: 'Cluster inside a terminating range overlapped by a live one',
    address: { value: '10.100.0.5', routability: 'Cluster' },
    ctx: { ranges: ranges('10.96.0.0/12', { cidr: '10.100.0.0/16', terminating: true }) },
    want: [],
  },
  {
    name: 'External inside a terminating range is still inside',
    address: { value: '10.200.0.5', routability: 'External' },
    ctx: { ranges: ranges('10.96.0.0/12', { cidr: '10.200.0.0/16', terminating: true }) },
    want: [`ExternalAddressInsideServiceRange@${A0}.value`],
  },
  {
    name: 'network address of a small range inside a larger live one is usable',
    address: { value: '10.100.0.0', routability: 'Cluster' },
    ctx: { ranges: ranges('10.96.0.0/12', '10.100.0.0/16') },
    want: [],
  },

  // External.
  {
    name: 'External inside IPv4 range',
    address: { value: '10.96.0.10', routability: 'External' },
    want: [`ExternalAddressInsideServiceRange@${A0}.value`],
  },
  {
    name: 'External inside IPv6 range',
    address: { value: 'fd00:10:96::10', routability: 'External' },
    want: [`ExternalAddressInsideServiceRange@${A0}.value`],
  },
  {
    name: 'External private but outside range',
    address: { value: '192.168.1.10', routability: 'External' },
    want: [],
  },
  {
    name: 'External hostname under cluster domain',
    address: { type: 'Hostname', value: 'gw.apps.svc.cluster.local', routability: 'External' },
    want: [`ExternalHostnameInClusterDomain@${A0}.value`],
  },
  {
    name: 'External wildcard hostname under cluster domain',
    address: { type: 'Hostname', value: '*.apps.svc.cluster.local', routability: 'External' },
    want: [`ExternalHostnameInClusterDomain@${A0}.value`],
  },
  {
    name: 'External hostname under a custom cluster domain',
    address: { type: 'Hostname', value: 'gw.apps.svc.corp.internal', routability: 'External' },
    ctx: { clusterDomain: 'corp.internal' },
    want: [`ExternalHostnameInClusterDomain@${A0}.value`],
  },
  {
    name: 'External hostname merely containing the domain',
    address: { type: 'Hostname', value: 'svc.cluster.local.example.com', routability: 'External' },
    want: [],
  },
  {
    name: 'External public hostname',
    address: { type: 'Hostname', value: 'gw.example.com', routability: 'External' },
    want: [],
  },
];
