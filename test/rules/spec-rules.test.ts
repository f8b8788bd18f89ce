import { describe, expect, it } from 'vitest';
import { aggregateMessage, validateGateway } from '../../src/rules/index.js';
import { baseGateway, codes, context, create, ranges, type Address } from '../support/gateways.js';
import type { RuleContext } from '../../src/rules/types.js';

const long = (n: number) => `example.com/${'a'.repeat(n - 'example.com/'.length)}`;

interface Row {
  name: string;
  address: Address;
  want: string[]; // CODE@field of denying findings
  notices?: string[];
  ctx?: Partial<RuleContext>;
}

const A0 = 'spec.addresses[0]';

const rows: Row[] = [
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

describe('spec rules (table over one base Gateway)', () => {
  it.each(rows)('$name', ({ address, want, notices, ctx }) => {
    const result = validateGateway(create(baseGateway({ spec: [address] })), context(ctx));
    expect(codes(result.violations)).toEqual(want);
    expect(result.allowed).toBe(want.length === 0);
    expect(codes(result.notices)).toEqual(notices ?? []);
  });
});

describe('spec rules across entries', () => {
  it('reports every failing entry with its own index, dual-stack', () => {
    const result = validateGateway(
      create(
        baseGateway({
          spec: [
            { value: '10.96.0.10', routability: 'Cluster' },
            { value: '10.0.0.5', routability: 'Cluster' },
            { value: 'fd00:10:96::5', routability: 'Cluster' },
            { value: 'fd00:10:96::6', routability: 'External' },
          ],
        }),
      ),
      context(),
    );
    expect(codes(result.violations)).toEqual([
      'ClusterAddressOutsideServiceRange@spec.addresses[1].value',
      'ExternalAddressInsideServiceRange@spec.addresses[3].value',
    ]);
    expect(result.message.startsWith('[spec.addresses[1].value: Invalid value: "10.0.0.5": ')).toBe(true);
    expect(result.message).toContain(', spec.addresses[3].value: ');
  });

  it('spec rules do not run for the status subresource, nor on DELETE', () => {
    const gw = baseGateway({ spec: [{ value: '10.0.0.5', routability: 'Cluster' }] });
    expect(validateGateway({ operation: 'DELETE', object: gw }, context()).allowed).toBe(true);
    expect(
      validateGateway({ operation: 'UPDATE', subResource: 'status', object: gw, oldObject: gw }, context())
        .allowed,
    ).toBe(true);
  });

  it('a malformed addresses field is reported, not thrown', () => {
    const gw = baseGateway();
    (gw.spec as Record<string, unknown>)['addresses'] = 'Cluster';
    const result = validateGateway(create(gw), context());
    expect(codes(result.violations)).toEqual(['AddressesMalformed@spec.addresses']);
    const items = baseGateway({ spec: ['Cluster' as unknown as Address, { routability: 'cluster' }] });
    expect(codes(validateGateway(create(items), context()).violations)).toEqual([
      'AddressesMalformed@spec.addresses[0]',
      'RoutabilityUnsupported@spec.addresses[1].routability',
    ]);
  });

  it('spec-policy warn allows with warnings and an audit annotation', () => {
    const result = validateGateway(
      create(baseGateway({ spec: [{ value: '10.0.0.5', routability: 'Cluster' }] })),
      context({ specPolicy: 'warn' }),
    );
    expect(result.allowed).toBe(true);
    expect(codes(result.warned)).toEqual(['ClusterAddressOutsideServiceRange@spec.addresses[0].value']);
    expect(result.warnings).toEqual([
      'spec.addresses[0].value: Cluster address "10.0.0.5" is outside the service range',
    ]);
    expect(result.auditAnnotations).toEqual({
      warned: 'ClusterAddressOutsideServiceRange@spec.addresses[0].value',
    });
  });

  it('a Gateway with no addresses is allowed with nothing to say', () => {
    const result = validateGateway(create(baseGateway()), context());
    expect(result).toMatchObject({ allowed: true, warnings: [], auditAnnotations: {}, message: '' });
  });
});

describe('ClusterAddressAllocated', () => {
  const allocated = {
    holderOf: (ip: string) =>
      ip === '10.96.0.10'
        ? { group: '', resource: 'services', namespace: 'kube-system', name: 'kube-dns' }
        : ip === '10.96.0.20'
          ? { group: 'gateway.networking.k8s.io', resource: 'gateways', namespace: 'apps', name: 'gw' }
          : ip === '10.96.0.30'
            ? { group: 'gateway.networking.k8s.io', resource: 'gateways', namespace: 'other', name: 'gw' }
            : undefined,
  };
  it.each([
    ['held by a Service', '10.96.0.10', ['ClusterAddressAllocated@spec.addresses[0].value']],
    ['held by this Gateway', '10.96.0.20', []],
    [
      'held by a same-named Gateway elsewhere',
      '10.96.0.30',
      ['ClusterAddressAllocated@spec.addresses[0].value'],
    ],
    ['free', '10.96.0.40', []],
  ])('%s', (_name, value, want) => {
    const result = validateGateway(
      create(baseGateway({ spec: [{ value, routability: 'Cluster' }] })),
      context({ allocatedIPs: allocated }),
    );
    expect(codes(result.violations)).toEqual(want);
  });
  it('names the holder in the message', () => {
    const result = validateGateway(
      create(baseGateway({ spec: [{ value: '10.96.0.10', routability: 'Cluster' }] })),
      context({ allocatedIPs: allocated }),
    );
    expect(result.message).toBe(
      'spec.addresses[0].value: Invalid value: "10.96.0.10": already allocated to services/kube-system/kube-dns',
    );
  });
});

describe('ClusterAddressAllocationUnchecked', () => {
  const unknown = {
    holderOf: () => undefined,
    uncheckedReason: (ip: string) => (ip === '10.96.0.10' ? 'HTTP 403 from the API server' : undefined),
  };
  it('allows with a warning naming the reason when the holder could not be learnt', () => {
    const result = validateGateway(
      create(baseGateway({ spec: [{ value: '10.96.0.10', routability: 'Cluster' }] })),
      context({ allocatedIPs: unknown }),
    );
    expect(result.allowed).toBe(true);
    expect(codes(result.notices)).toEqual(['ClusterAddressAllocationUnchecked@spec.addresses[0].value']);
    expect(result.warnings).toEqual([
      'spec.addresses[0].value: allocation of "10.96.0.10" not checked (HTTP 403 from the API server)',
    ]);
  });
  it('says nothing for a known-free address, or one another rule already denies', () => {
    const free = validateGateway(
      create(baseGateway({ spec: [{ value: '10.96.0.11', routability: 'Cluster' }] })),
      context({ allocatedIPs: unknown }),
    );
    expect(free.warnings).toEqual([]);
    const outside = validateGateway(
      create(baseGateway({ spec: [{ value: '192.0.2.10', routability: 'Cluster' }] })),
      context({ allocatedIPs: { holderOf: () => undefined, uncheckedReason: () => 'down' } }),
    );
    expect(codes(outside.notices)).toEqual([]);
    expect(codes(outside.violations)).toEqual(['ClusterAddressOutsideServiceRange@spec.addresses[0].value']);
  });
});

describe('report size', () => {
  it('caps the aggregated message at 32 violations', () => {
    const one = validateGateway(
      create(baseGateway({ spec: [{ value: '10.0.0.5', routability: 'Cluster' }] })),
      context(),
    ).violations[0]!;
    const message = aggregateMessage(Array.from({ length: 100 }, () => one));
    expect(message.endsWith(', and 68 more]')).toBe(true);
  });

  it('judges a list longer than the CRD allows as one finding, without walking it, under every policy', () => {
    const spec = Array.from({ length: 100_000 }, () => ({ value: '10.0.0.5', routability: 'Cluster' }));
    for (const specPolicy of ['enforce', 'warn'] as const) {
      const result = validateGateway(create(baseGateway({ spec })), context({ specPolicy }));
      expect(result.allowed).toBe(false);
      expect(codes(result.violations)).toEqual(['AddressesTooMany@spec.addresses']);
      expect(result.message).toBe('spec.addresses: Too many: 100000: must have at most 16 items');
    }
    const sixteen = validateGateway(create(baseGateway({ spec: spec.slice(0, 16) })), context());
    expect(sixteen.violations).toHaveLength(16);
  });
});
