/**
 * Table rows for the engine fixes of the adversarial review (ratcheting by
 * effective identity, malformed values under every policy, AddressesAssigned
 * MUSTs, the global-range exception, in-cluster names, messages) and for
 * upstream's experimental revision of GEP-5093 as a parameter of the context.
 */
import { describe, expect, it } from 'vitest';
import { mutateGateway, validateGateway, type RuleContext } from '../../src/rules/index.js';
import { clampWarning } from '../../src/rules/messages.js';
import {
  baseGateway,
  codes,
  context,
  create,
  ranges,
  statusUpdate,
  update,
  type Address,
} from '../support/gateways.js';

const A0 = 'spec.addresses[0]';
const S0 = 'status.addresses[0]';
const EXP: Partial<RuleContext> = { revision: 'experimental' };

interface Row {
  name: string;
  spec?: Address[];
  status?: Address[];
  conditions?: Address[];
  ctx?: Partial<RuleContext>;
  /** CODE@field of denying findings. */
  want: string[];
  warned?: string[];
  notices?: string[];
}

function run(row: Omit<Row, 'name'>) {
  const ctx = context({ statusPolicy: 'warn', ...row.ctx });
  if (row.status || row.conditions) {
    const gw = baseGateway({
      ...(row.spec ? { spec: row.spec } : {}),
      ...(row.status ? { status: row.status } : {}),
      ...(row.conditions ? { conditions: row.conditions } : {}),
    });
    return validateGateway(statusUpdate(gw, baseGateway({ spec: row.spec ?? [] })), ctx);
  }
  return validateGateway(create(baseGateway({ spec: row.spec ?? [] })), ctx);
}

const rows: Row[] = [
  // Issue 10 item 2: malformed values are invalid data, denied under every policy.
  {
    name: 'status "external" under the default warn policy is denied',
    status: [{ value: '203.0.113.10', routability: 'external' }],
    want: [`RoutabilityUnsupported@${S0}.routability`],
  },
  {
    name: 'spec "cluster" under --spec-policy warn is denied',
    spec: [{ value: '10.96.0.10', routability: 'cluster' }],
    ctx: { specPolicy: 'warn' },
    want: [`RoutabilityUnsupported@${A0}.routability`],
  },
  {
    name: 'status "" under the provisional revision is denied',
    status: [{ value: '203.0.113.10', routability: '' }],
    want: [`RoutabilityUnsupported@${S0}.routability`],
  },
  {
    name: 'spec "" under the provisional revision under warn is denied',
    spec: [{ routability: '' }],
    ctx: { specPolicy: 'warn' },
    want: [`RoutabilityUnsupported@${A0}.routability`],
  },
  // Issue 10 item 3: the three AddressesAssigned MUSTs (status policy enforce here).
  {
    name: 'PartiallyAssigned with Programmed=False',
    spec: [{ routability: 'Cluster' }],
    status: [{ value: '10.96.0.5', routability: 'Cluster' }],
    conditions: [
      { type: 'Programmed', status: 'False', reason: 'Invalid' },
      {
        type: 'AddressesAssigned',
        status: 'False',
        reason: 'PartiallyAssigned',
        message: 'spec.addresses[1]',
      },
    ],
    ctx: { statusPolicy: 'enforce' },
    want: ['AddressesAssignedInconsistent@status.conditions[0].status'],
  },
  {
    name: 'PartiallyAssigned with Programmed=True is fine',
    spec: [{ routability: 'Cluster' }],
    status: [{ value: '10.96.0.5', routability: 'Cluster' }],
    conditions: [
      { type: 'Programmed', status: 'True', reason: 'Programmed' },
      {
        type: 'AddressesAssigned',
        status: 'False',
        reason: 'PartiallyAssigned',
        message: 'spec.addresses[1]',
      },
    ],
    ctx: { statusPolicy: 'enforce' },
    want: [],
  },
  {
    name: 'NotAssigned with a status address that satisfies a request',
    spec: [{ value: '10.96.0.5', routability: 'Cluster' }],
    status: [{ value: '10.96.0.5', routability: 'Cluster' }],
    conditions: [
      { type: 'Programmed', status: 'False', reason: 'AddressNotAssigned' },
      { type: 'AddressesAssigned', status: 'False', reason: 'NotAssigned' },
    ],
    ctx: { statusPolicy: 'enforce' },
    want: [`AddressesAssignedInconsistent@${S0}`],
  },
  {
    name: 'True/Assigned with a spec entry no status address satisfies',
    spec: [{ routability: 'Cluster' }, { value: '203.0.113.9', routability: 'External' }],
    status: [{ value: '10.96.0.5', routability: 'Cluster' }],
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'Assigned' }],
    ctx: { statusPolicy: 'enforce' },
    want: ['AddressesAssignedInconsistent@status.conditions[0].status'],
  },
  {
    name: 'True/Assigned with every entry satisfied',
    spec: [{ routability: 'Cluster' }, { value: '203.0.113.9', routability: 'External' }],
    status: [
      { value: '10.96.0.5', routability: 'Cluster' },
      { value: '203.0.113.9', routability: 'External' },
    ],
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'Assigned' }],
    ctx: { statusPolicy: 'enforce' },
    want: [],
  },
  // Issue 10 item 5: in-cluster names, and Hostnames that are IP literals.
  ...['gw.apps.pod.cluster.local', 'svc.cluster.local', 'cluster.local', 'CLUSTER.LOCAL.'].map(
    (value): Row => ({
      name: `External hostname ${value} is in-cluster`,
      spec: [{ type: 'Hostname', value, routability: 'External' }],
      want: [`ExternalHostnameInClusterDomain@${A0}.value`],
    }),
  ),
  {
    name: 'External hostname outside the cluster domain',
    spec: [{ type: 'Hostname', value: 'gw.notcluster.local', routability: 'External' }],
    want: [],
  },
  {
    name: 'Hostname that is an IP literal inside the range, External',
    spec: [{ type: 'Hostname', value: '10.96.0.5', routability: 'External' }],
    want: [`ExternalAddressInsideServiceRange@${A0}.value`],
  },
  {
    name: 'Hostname that is an IP literal outside the range, Cluster',
    spec: [{ type: 'Hostname', value: '10.0.0.5', routability: 'Cluster' }],
    want: [`ClusterAddressOutsideServiceRange@${A0}.value`],
  },

  // Issue 9 item 1: the experimental revision.
  {
    name: 'experimental: External is refused',
    spec: [{ value: '203.0.113.10', routability: 'External' }],
    ctx: EXP,
    want: [`RoutabilityUnsupported@${A0}.routability`],
  },
  {
    name: 'experimental: status External is refused under warn',
    status: [{ value: '203.0.113.10', routability: 'External' }],
    ctx: EXP,
    want: [`RoutabilityUnsupported@${S0}.routability`],
  },
  {
    name: 'experimental: "" inside the range, no check',
    spec: [{ value: '10.96.0.5', routability: '' }],
    ctx: EXP,
    want: [],
  },
  {
    name: 'experimental: unset inside the range, no check',
    spec: [{ value: '10.96.0.5' }],
    ctx: EXP,
    want: [],
  },
  {
    name: 'experimental: status "" ClusterIP, no check',
    status: [{ value: '10.96.0.5', routability: '' }],
    ctx: { ...EXP, statusPolicy: 'enforce' },
    want: [],
  },
  {
    name: 'experimental: status unset ClusterIP, no check',
    status: [{ value: '10.96.0.5' }],
    ctx: { ...EXP, statusPolicy: 'enforce' },
    want: [],
  },
  {
    name: 'experimental: Cluster outside the range',
    spec: [{ value: '10.0.0.5', routability: 'Cluster' }],
    ctx: EXP,
    want: [`ClusterAddressOutsideServiceRange@${A0}.value`],
  },
  {
    name: 'experimental: Cluster reserved',
    spec: [{ value: '10.96.0.0', routability: 'Cluster' }],
    ctx: EXP,
    want: [`ClusterAddressReserved@${A0}.value`],
  },
  ...['k8s.io/scope', 'example.k8s.io/scope', 'gateway.networking.k8s.io/sentinel'].map(
    (routability): Row => ({
      name: `experimental: reserved prefix ${routability}`,
      spec: [{ routability }],
      ctx: EXP,
      want: [`RoutabilityUnsupported@${A0}.routability`],
    }),
  ),
  {
    name: 'experimental: sentinel is silent',
    spec: [{ routability: 'testing.x-k8s.io/sentinel' }],
    ctx: EXP,
    want: [],
  },
  {
    name: 'experimental: other testing values warn',
    spec: [{ routability: 'testing.x-k8s.io/unsupported' }],
    ctx: EXP,
    want: [],
    notices: [`RoutabilityTestingValue@${A0}.routability`],
  },
  {
    name: 'experimental: sentinel is not limited by the allow-list',
    spec: [{ routability: 'testing.x-k8s.io/sentinel' }],
    ctx: { ...EXP, allowedRoutability: new Set(['example.com/CorpWan']) },
    want: [],
  },
  {
    name: 'experimental: an unset request matches a status Cluster',
    spec: [{ type: 'IPAddress' }],
    status: [{ value: '10.96.0.5', routability: 'Cluster' }],
    ctx: { ...EXP, statusPolicy: 'enforce' },
    want: [],
  },
  {
    name: 'experimental: an unset request does not match a prefixed status value',
    spec: [{ type: 'IPAddress' }],
    status: [{ value: '10.96.0.5', routability: 'example.com/Corp' }],
    ctx: { ...EXP, statusPolicy: 'enforce' },
    want: [`RoutabilityMismatch@${S0}.routability`],
  },
  {
    name: 'experimental: a Cluster request answered with ""',
    spec: [{ value: '10.96.0.5', routability: 'Cluster' }],
    status: [{ value: '10.96.0.5', routability: '' }],
    ctx: { ...EXP, statusPolicy: 'enforce' },
    want: [`RoutabilityMismatch@${S0}.routability`],
  },
  {
    name: 'experimental: success reason AddressesAssigned',
    spec: [{ routability: 'Cluster' }],
    status: [{ value: '10.96.0.5', routability: 'Cluster' }],
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'AddressesAssigned' }],
    ctx: { ...EXP, statusPolicy: 'enforce' },
    want: [],
  },
  {
    name: 'experimental: the provisional success reason is not a valid pair',
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'Assigned' }],
    ctx: { ...EXP, statusPolicy: 'enforce' },
    want: ['AddressesAssignedInconsistent@status.conditions[0].reason'],
  },
  {
    name: 'provisional: the experimental success reason is not a valid pair',
    conditions: [{ type: 'AddressesAssigned', status: 'True', reason: 'AddressesAssigned' }],
    ctx: { statusPolicy: 'enforce' },
    want: ['AddressesAssignedInconsistent@status.conditions[0].reason'],
  },
];

describe('engine rows (issue 10 fixes, experimental revision)', () => {
  it.each(rows)('$name', (row) => {
    const result = run(row);
    expect(codes(result.violations)).toEqual(row.want);
    expect(codes(result.notices)).toEqual(row.notices ?? []);
  });
});

describe('ratcheting by effective identity (issue 10 defect 1)', () => {
  it('a status stored unset equals the same entry after the mutation defaulted it to External', () => {
    const stored = baseGateway({ status: [{ value: '10.96.0.42' }] });
    const written = baseGateway({
      status: [{ value: '10.96.0.42', routability: 'External' }],
      conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
    });
    const result = validateGateway(statusUpdate(written, stored), context({ statusPolicy: 'enforce' }));
    expect(result.allowed).toBe(true);
    expect(codes(result.ratcheted)).toEqual(['ExternalAddressInsideServiceRange@status.addresses[0].value']);
  });

  it('IP values compare canonically', () => {
    const old = baseGateway({ spec: [{ value: 'FD00:10:96::A', routability: 'Cluster' }] });
    const now = baseGateway({ spec: [{ value: 'fd00:10:96::a', routability: 'Cluster' }] });
    const moved = context({ ranges: ranges('10.96.0.0/12') });
    expect(validateGateway(update(now, old), moved).allowed).toBe(true);
  });

  it('experimental: unset and "" are the same entry', () => {
    const stored = baseGateway({ status: [{ value: '10.96.0.42', routability: 'Cluster' }, { value: 'x' }] });
    const written = baseGateway({
      status: [
        { value: '10.96.0.42', routability: 'Cluster' },
        { value: 'x', routability: '' },
      ],
    });
    const ctx = context({
      revision: 'experimental',
      statusPolicy: 'enforce',
      ranges: ranges('10.128.0.0/16'),
    });
    expect(validateGateway(statusUpdate(written, stored), ctx).allowed).toBe(true);
  });
});

describe('mutation by revision', () => {
  const gw = baseGateway({ status: [{ value: '203.0.113.10' }, { value: '10.96.0.5', routability: '' }] });
  it('provisional: unset and "" become External', () => {
    expect(mutateGateway(statusUpdate(gw, gw), context()).patch).toEqual([
      { op: 'add', path: '/status/addresses/0/routability', value: 'External' },
      { op: 'add', path: '/status/addresses/1/routability', value: 'External' },
    ]);
  });
  it('experimental: unset becomes an explicit ""; "" is left alone', () => {
    expect(mutateGateway(statusUpdate(gw, gw), context(EXP)).patch).toEqual([
      { op: 'add', path: '/status/addresses/0/routability', value: '' },
    ]);
  });
  it('a status list longer than the CRD allows gets no patch and one warning', () => {
    const big = baseGateway({ status: Array.from({ length: 100_000 }, () => ({ value: '203.0.113.10' })) });
    const result = mutateGateway(statusUpdate(big, big), context());
    expect(result.patch).toEqual([]);
    expect(result.warnings).toEqual([
      'status.addresses: 100000 entries, more than the 16 the Gateway CRD allows',
    ]);
  });
});

describe('messages (issue 10 item 6)', () => {
  const message = (row: Omit<Row, 'name'>) => {
    const r = run(row);
    return [...r.violations, ...r.warned, ...r.notices][0]!;
  };

  it('the ratchet warning names the problem, not a rule code', () => {
    const old = baseGateway({ spec: [{ value: '10.96.0.10', routability: 'Cluster' }] });
    const edited = structuredClone(old);
    edited.metadata.labels = { team: 'x' };
    const result = validateGateway(update(edited, old), context({ ranges: ranges('10.128.0.0/16') }));
    expect(result.warnings).toEqual([
      'spec.addresses[0]: unchanged, so allowed, although now: Cluster address "10.96.0.10" is outside the service range',
    ]);
    expect(result.warnings.join()).not.toMatch(/ClusterAddressOutsideServiceRange/);
  });

  it('one wording for an unset routability, and the Required form for a missing one', () => {
    const inside = message({ status: [{ value: '10.96.0.42' }], want: [] });
    expect(inside.message).toContain('routability unset (read as External) requires');
    const mismatch = message({
      spec: [{ routability: 'Cluster' }],
      status: [{ value: '203.0.113.1' }],
      want: [],
    });
    expect(mismatch.message).toBe(
      'status.addresses[0].routability: Required value: routability unset (read as External), but no spec address requests routability External (requested: Cluster); an implementation must not substitute a different scope',
    );
    expect(mismatch.type).toBe('FieldValueRequired');
  });

  it('an IPv4-mapped IPv6 value says which IPv4 address it was read as', () => {
    const f = message({ spec: [{ value: '::ffff:10.0.0.5', routability: 'Cluster' }], want: [] });
    expect(f.message).toContain('"::ffff:10.0.0.5": read as IPv4 10.0.0.5:');
    expect(f.warning).toContain('(read as IPv4 10.0.0.5)');
  });

  it('a CIDR given as a value gets a range hint', () => {
    const f = message({ spec: [{ value: '10.96.0.0/12', routability: 'Cluster' }], want: [] });
    expect(f.message).toContain('is a range, not an address');
  });

  it('says 253 characters, not bytes', () => {
    const f = message({ spec: [{ routability: `example.com/${'a'.repeat(250)}` }], want: [] });
    expect(f.message).toBe('spec.addresses[0].routability: Too long: may not be more than 253 characters');
  });

  it('experimental External says what to write instead', () => {
    const f = message({ spec: [{ routability: 'External' }], ctx: EXP, want: [] });
    expect(f.message).toContain('upstream GEP-5093 removed "External": leave routability empty');
  });

  it('warnings are cut at a word boundary and keep their hint whole', () => {
    const text = `status.addresses[0].routability: routability unsupported "${'word '.repeat(30)}"; did you mean "Cluster"?`;
    const clamped = clampWarning(text);
    expect(clamped.length).toBeLessThanOrEqual(120);
    expect(clamped.endsWith('...; did you mean "Cluster"?')).toBe(true);
    expect(clamped).toMatch(/word\.\.\.;/);
  });
});
