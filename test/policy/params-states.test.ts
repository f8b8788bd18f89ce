/**
 * The policy in every state of its params, against the webhook (the engine
 * with the cluster's real ranges): absent (not yet applied, deleted), without
 * data (the chart's ConfigMap before serve writes it), with empty or
 * unparsable keys, and stale. In none of the first four does the policy refuse
 * a write the webhook admits; under warn on both lists it refuses nothing in
 * any state. Stale params are the one state that can refuse what the webhook
 * admits; the last block pins exactly which writes (docs/policy.md § Params
 * states says when that window opens and how long it lasts).
 *
 * A binding's params are looked up as kube-apiserver's CollectParams does
 * (staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go):
 * by name in the paramRef's namespace; none found and parameterNotFoundAction
 * Deny is an error, which the policy's failurePolicy Fail turns into a denial
 * (Ignore: admitted); none found and Allow evaluates nothing.
 */
import { describe, expect, it } from 'vitest';
import {
  generatePolicies,
  paramsConfigMap,
  type GeneratedPolicy,
  type PolicySettings,
} from '../../src/policy/index.js';
import { validateGateway, type GatewayRequest, type RuleContext } from '../../src/rules/index.js';
import { baseGateway, context, create, DUAL_STACK, ranges, statusUpdate } from '../kit/gateways.js';
import { evaluatePolicy } from '../kit/policy-eval.js';
import { rows as specRows } from '../rules/rows/spec-rules.js';
import { rows as statusRows } from '../rules/rows/status-rules.js';

type Params = Record<string, unknown> | undefined;

/** What one binding does to a request with these params (undefined: the ConfigMap is absent). */
function bindingRefuses(generated: GeneratedPolicy, request: GatewayRequest, params: Params): string[] {
  const binding = generated.binding as {
    spec: { validationActions: string[]; paramRef: { parameterNotFoundAction: string } };
  };
  const policy = generated.policy as { spec: { failurePolicy: string } };
  const denies = binding.spec.validationActions.includes('Deny');
  if (params === undefined) {
    if (binding.spec.paramRef.parameterNotFoundAction !== 'Deny') return [];
    // A configuration error: failurePolicy decides, whatever the binding's validationActions.
    return policy.spec.failurePolicy === 'Fail' ? ['no params found (parameterNotFoundAction Deny)'] : [];
  }
  const verdict = evaluatePolicy(generated, request, params);
  const errors = policy.spec.failurePolicy === 'Fail' ? [...verdict.errors] : [];
  return denies ? [...verdict.failures.map((f) => generated.rules[f.index]!.code), ...errors] : errors;
}

function policyRefuses(settings: PolicySettings, request: GatewayRequest, params: Params): string[] {
  return generatePolicies(settings).flatMap((g) => bindingRefuses(g, request, params));
}

const settingsOf = (ctx: RuleContext): PolicySettings => ({
  revision: ctx.revision ?? 'provisional',
  specPolicy: ctx.specPolicy,
  statusPolicy: ctx.statusPolicy,
  clusterDomain: ctx.clusterDomain,
  allowedRoutability: ctx.allowedRoutability,
});

const configMap = (data?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'gateway-routability-params', namespace: 'gateway-routability-webhook' },
  ...(data ? { data } : {}),
});

const STATES: readonly (readonly [string, Params])[] = [
  ['absent (not yet applied, or deleted)', undefined],
  ['without data (the chart creates it; serve has not written it yet)', configMap()],
  ['with empty keys', configMap({ serviceCIDRs: '', terminatingCIDRs: '' })],
  ['with a key missing', configMap({ terminatingCIDRs: '' })],
  ['with nothing that parses', configMap({ serviceCIDRs: 'not-a-cidr, 10.96.0.0/99', terminatingCIDRs: '' })],
];

interface Case {
  readonly name: string;
  readonly request: GatewayRequest;
  readonly ctx: RuleContext;
}

/** Every spec and status row of the engine's tables, under every revision and policy pair. */
function cases(): Case[] {
  const base: Case[] = [
    ...specRows.map((row) => ({
      name: `spec: ${row.name}`,
      request: create(baseGateway({ spec: [row.address] })),
      ctx: context(row.ctx),
    })),
    ...statusRows.map((row) => ({
      name: `status: ${row.name}`,
      request: statusUpdate(
        baseGateway({
          ...(row.spec ? { spec: row.spec } : {}),
          ...(row.status ? { status: row.status } : {}),
          ...(row.conditions ? { conditions: row.conditions } : {}),
        }),
        baseGateway({ spec: row.spec ?? [] }),
      ),
      ctx: context(row.ctx),
    })),
  ];
  return base.flatMap((c) =>
    (['enforce', 'warn'] as const).flatMap((specPolicy) =>
      (['enforce', 'warn'] as const).map((statusPolicy) => ({
        ...c,
        name: `${c.name} (spec ${specPolicy}, status ${statusPolicy})`,
        ctx: { ...c.ctx, specPolicy, statusPolicy },
      })),
    ),
  );
}

/** What the webhook refuses: the engine's denials, with the cluster's ranges. */
const webhookRefuses = (c: Case) => validateGateway(c.request, c.ctx).violations.map((f) => f.code);

const ALL = cases();

describe('params absent, empty or not yet written: the policy refuses nothing the webhook admits', () => {
  it('has cases the webhook admits and cases it refuses, under every policy pair', () => {
    expect(ALL.length).toBeGreaterThan(400);
    expect(ALL.filter((c) => webhookRefuses(c).length === 0).length).toBeGreaterThan(100);
    expect(ALL.filter((c) => webhookRefuses(c).length > 0).length).toBeGreaterThan(100);
  });

  it.each(STATES)('%s', (_state, params) => {
    let refusedByBoth = 0;
    for (const c of ALL) {
      const policy = policyRefuses(settingsOf(c.ctx), c.request, params);
      const webhook = new Set<string>(webhookRefuses(c));
      for (const code of policy)
        expect(webhook.has(code), `${c.name}: the policy refuses ${code}`).toBe(true);
      if (policy.length > 0) refusedByBoth++;
    }
    // Not vacuous: with params present the static rules (syntax, hostnames, mismatch) still refuse.
    if (params !== undefined) expect(refusedByBoth).toBeGreaterThan(20);
  });

  it('with the right ranges the range rules do refuse (the guard is on unknown ranges only)', () => {
    const cluster = create(baseGateway({ spec: [{ value: '192.0.2.1', routability: 'Cluster' }] }));
    const settings = settingsOf(context());
    expect(policyRefuses(settings, cluster, paramsConfigMap(DUAL_STACK))).toEqual([
      'ClusterAddressOutsideServiceRange',
    ]);
    for (const [state, params] of STATES) expect(policyRefuses(settings, cluster, params), state).toEqual([]);
  });
});

describe('warn on both lists: nothing is refused, whatever the params', () => {
  it.each([...STATES, ['right', paramsConfigMap(DUAL_STACK)] as const])('params %s', (_state, params) => {
    for (const c of ALL.filter((x) => x.ctx.specPolicy === 'warn' && x.ctx.statusPolicy === 'warn'))
      expect(policyRefuses(settingsOf(c.ctx), c.request, params), c.name).toEqual([]);
  });
});

describe('stale params: the one state that can refuse what the webhook admits', () => {
  const settings = settingsOf(context());
  const at = (value: string, routability: string) =>
    create(baseGateway({ spec: [{ type: 'IPAddress', value, routability }] }));

  it('a range the cluster added and the params do not name yet: Cluster addresses in it are refused', () => {
    const cluster = context({ ranges: ranges('10.96.0.0/12', '10.200.0.0/16') });
    const request = at('10.200.0.10', 'Cluster');
    expect(validateGateway(request, cluster).violations).toEqual([]);
    expect(policyRefuses(settings, request, paramsConfigMap(ranges('10.96.0.0/12')))).toEqual([
      'ClusterAddressOutsideServiceRange',
    ]);
  });

  it('a range the cluster removed and the params still name: External addresses in it are refused', () => {
    const cluster = context({ ranges: ranges('10.96.0.0/12') });
    const request = at('10.200.0.10', 'External');
    expect(validateGateway(request, cluster).violations).toEqual([]);
    expect(
      policyRefuses(settings, request, paramsConfigMap(ranges('10.96.0.0/12', '10.200.0.0/16'))),
    ).toEqual(['ExternalAddressInsideServiceRange']);
  });

  it('params naming more ranges than the cluster never refuse a Cluster address the webhook admits', () => {
    const cluster = context({ ranges: ranges('10.96.0.0/12') });
    const superset = paramsConfigMap(ranges('10.96.0.0/12', '10.200.0.0/16'));
    for (const value of ['10.96.0.10', '10.100.1.1', '10.111.255.254'])
      expect(policyRefuses(settings, at(value, 'Cluster'), superset), value).toEqual(
        validateGateway(at(value, 'Cluster'), cluster).violations.map((f) => f.code),
      );
  });
});
