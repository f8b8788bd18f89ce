import { describe, expect, it } from 'vitest';
import { mutateGateway, validateGateway } from '../../src/rules/index.js';
import { baseGateway, codes, context, ranges, statusUpdate, type Address } from '../support/gateways.js';
import type { RuleContext } from '../../src/rules/types.js';

interface Row {
  name: string;
  spec?: Address[];
  status?: Address[];
  conditions?: Address[];
  want: string[];
  notices?: string[];
  ctx?: Partial<RuleContext>;
}

const S0 = 'status.addresses[0]';
const programmedFalse = { type: 'Programmed', status: 'False', reason: 'AddressNotAssigned' };

const rows: Row[] = [
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
];

describe('status rules (table over one base Gateway)', () => {
  it.each(rows)('$name', ({ spec, status, conditions, want, notices, ctx }) => {
    const gw = baseGateway({
      ...(spec ? { spec } : {}),
      ...(status ? { status } : {}),
      ...(conditions ? { conditions } : {}),
    });
    const result = validateGateway(statusUpdate(gw, baseGateway({ spec: spec ?? [] })), context(ctx));
    expect(codes(result.violations)).toEqual(want);
    expect(codes(result.notices)).toEqual(notices ?? []);
  });
});

describe('status policy', () => {
  const dishonest = baseGateway({ status: [{ value: '192.168.7.7', routability: 'Cluster' }] });
  it('warn (the default) allows, warns compactly, and annotates the audit log', () => {
    const result = validateGateway(statusUpdate(dishonest, baseGateway()), context({ statusPolicy: 'warn' }));
    expect(result.allowed).toBe(true);
    expect(result.warnings).toEqual([
      'status.addresses[0].value: Cluster address "192.168.7.7" is outside the service range',
    ]);
    expect(result.auditAnnotations).toEqual({
      warned: 'ClusterAddressOutsideServiceRange@status.addresses[0].value',
    });
  });
  it('enforce denies', () => {
    const result = validateGateway(
      statusUpdate(dishonest, baseGateway()),
      context({ statusPolicy: 'enforce' }),
    );
    expect(result.allowed).toBe(false);
    expect(result.message).toBe(
      'status.addresses[0].value: Invalid value: "192.168.7.7": routability Cluster requires an address inside the service range (10.96.0.0/12, fd00:10:96::/112)',
    );
  });
  it('spec policy does not govern status findings', () => {
    const result = validateGateway(
      statusUpdate(dishonest, baseGateway()),
      context({ specPolicy: 'enforce', statusPolicy: 'warn' }),
    );
    expect(result.allowed).toBe(true);
  });
});

describe('status defaulting (mutation)', () => {
  it('adds routability External to each status address without one, by index', () => {
    const gw = baseGateway({
      status: [
        { value: '203.0.113.10' },
        { value: '10.96.0.42', routability: 'Cluster' },
        { type: 'Hostname', value: 'gw.example.com' },
      ],
    });
    const result = mutateGateway(statusUpdate(gw, gw), context());
    expect(result.patch).toEqual([
      { op: 'add', path: '/status/addresses/0/routability', value: 'External' },
      { op: 'add', path: '/status/addresses/2/routability', value: 'External' },
    ]);
    expect(result.notices).toEqual([]);
  });

  it('is idempotent: the patched object yields no operations', () => {
    const gw = baseGateway({
      status: [{ value: '203.0.113.10' }, { value: '10.96.0.42', routability: null }],
    });
    const first = mutateGateway(statusUpdate(gw, gw), context());
    expect(first.patch).toHaveLength(2);
    const patched = structuredClone(gw) as { status: { addresses: Address[] } };
    for (const op of first.patch)
      patched.status.addresses[Number(op.path.split('/')[3])]!['routability'] = op.value;
    expect(mutateGateway(statusUpdate(patched, gw), context()).patch).toEqual([]);
  });

  it('warns when it defaults an address that looks cluster-internal', () => {
    const gw = baseGateway({
      status: [{ value: '10.96.0.42' }, { type: 'Hostname', value: 'gw.apps.svc.cluster.local' }],
    });
    const result = mutateGateway(statusUpdate(gw, gw), context());
    expect(codes(result.notices)).toEqual([
      'StatusDefaultedExternal@status.addresses[0]',
      'StatusDefaultedExternal@status.addresses[1]',
    ]);
    for (const f of result.notices) expect(f.warning.length).toBeLessThanOrEqual(120);
  });

  it.each([
    ['CREATE of the main resource', { operation: 'CREATE', subResource: '' }],
    ['UPDATE of the main resource', { operation: 'UPDATE', subResource: '' }],
    ['DELETE', { operation: 'DELETE', subResource: '' }],
  ])('does nothing on %s', (_name, op) => {
    const gw = baseGateway({ status: [{ value: '203.0.113.10' }] });
    expect(mutateGateway({ ...op, object: gw, oldObject: gw }, context()).patch).toEqual([]);
  });

  it('skips entries that are not objects and a status without addresses', () => {
    const gw = baseGateway({ status: ['x' as unknown as Address, { value: '203.0.113.10' }] });
    expect(mutateGateway(statusUpdate(gw, gw), context()).patch).toEqual([
      { op: 'add', path: '/status/addresses/1/routability', value: 'External' },
    ]);
    expect(mutateGateway(statusUpdate(baseGateway(), baseGateway()), context()).patch).toEqual([]);
  });
});
