/** The review-fix table (issue 10 rows): test/rules/revision-and-review-fixes.test.ts runs it on the engine, test/policy on the generated policy. */
import { validateGateway, type RuleContext } from '../../../src/rules/index.js';
import { baseGateway, context, create, statusUpdate, type Address } from '../../kit/gateways.js';

export const A0 = 'spec.addresses[0]';
export const S0 = 'status.addresses[0]';
export const EXP: Partial<RuleContext> = { revision: 'experimental' };

export interface Row {
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

/** The request and context a row stands for. */
export function requestOf(row: Omit<Row, 'name'>) {
  const ctx = context({ statusPolicy: 'warn', ...row.ctx });
  if (row.status || row.conditions) {
    const gw = baseGateway({
      ...(row.spec ? { spec: row.spec } : {}),
      ...(row.status ? { status: row.status } : {}),
      ...(row.conditions ? { conditions: row.conditions } : {}),
    });
    return { request: statusUpdate(gw, baseGateway({ spec: row.spec ?? [] })), ctx };
  }
  return { request: create(baseGateway({ spec: row.spec ?? [] })), ctx };
}

export function run(row: Omit<Row, 'name'>) {
  const { request, ctx } = requestOf(row);
  return validateGateway(request, ctx);
}

export const rows: Row[] = [
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
  // docs/dev/decisions.md: a prefix label over 63 characters is valid, as upstream's dns1123Subdomain has it.
  ...['provisional', 'experimental'].map((revision): Row => ({
    name: `${revision}: a 64-character prefix label is accepted`,
    spec: [{ routability: `${'a'.repeat(64)}.example.com/Wan` }],
    ctx: { revision: revision as 'provisional' | 'experimental' },
    want: [],
  })),
  {
    name: 'experimental: a prefix label with an upper-case letter is refused',
    spec: [{ routability: 'Example.com/Wan' }],
    ctx: EXP,
    want: [`RoutabilityUnsupported@${A0}.routability`],
  },
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
