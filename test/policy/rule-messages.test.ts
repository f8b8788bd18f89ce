/**
 * The policy's messages against the engine's, word for word, for the four
 * forms of RoutabilityMismatch (the status entry's routability set or unset;
 * a spec entry asking for that address, or none), and the fixed parts of every
 * rule: its severity is the catalogue's, and its static `message` (what the
 * API server shows when the messageExpression cannot run) names the list and
 * field it is about. The equality tests' tables reach the set forms only.
 */
import { describe, expect, it } from 'vitest';
import { validation } from '../../src/policy/generate.js';
import { generatePolicies, paramsConfigMap, type PolicySettings } from '../../src/policy/index.js';
import { policyRules } from '../../src/policy/policy-rules.js';
import { CATALOGUE, validateGateway } from '../../src/rules/index.js';
import { baseGateway, context, statusUpdate, type Address } from '../kit/gateways.js';
import { evaluatePolicy } from '../kit/policy-eval.js';

const ctx = context();
const settings: PolicySettings = {
  revision: 'provisional',
  specPolicy: ctx.specPolicy,
  statusPolicy: ctx.statusPolicy,
  clusterDomain: ctx.clusterDomain,
  allowedRoutability: ctx.allowedRoutability,
};

/** The policy's and the engine's RoutabilityMismatch messages for a status write. */
function messages(spec: Address[], status: Address[]): { policy: string[]; engine: string[] } {
  const request = statusUpdate(baseGateway({ spec, status }), baseGateway({ spec }));
  const engine = [...validateGateway(request, ctx).violations]
    .filter((f) => f.code === 'RoutabilityMismatch')
    .map((f) => f.message);
  const policy: string[] = [];
  for (const generated of generatePolicies(settings)) {
    const verdict = evaluatePolicy(generated, request, paramsConfigMap(ctx.ranges));
    expect(verdict.errors).toEqual([]);
    for (const f of verdict.failures)
      if (generated.rules[f.index]!.code === 'RoutabilityMismatch') policy.push(f.message);
  }
  return { policy, engine };
}

const ip = (value: string, routability?: string): Address => ({
  type: 'IPAddress',
  value,
  ...(routability === undefined ? {} : { routability }),
});

describe('RoutabilityMismatch in the policy', () => {
  it.each([
    [
      'set, asked for by a spec entry',
      [ip('10.0.0.1', 'Cluster')],
      [ip('10.0.0.1', 'External')],
      /spec\.addresses\[0\]/,
    ],
    ['unset, asked for by a spec entry', [ip('10.0.0.1', 'Cluster')], [ip('10.0.0.1')], /routability unset/],
    ['unset, no spec entry for it', [{ routability: 'Cluster' }], [ip('10.0.0.1')], /routability unset/],
    ['set, no spec entry for it', [{ routability: 'Cluster' }], [ip('10.0.0.1', 'External')], /External/],
  ])('%s: the engine’s message word for word', (_, spec, status, shape) => {
    const { policy, engine } = messages(spec, status);
    expect(engine).toHaveLength(1);
    expect(engine[0]).toMatch(shape);
    expect(policy).toEqual(engine);
  });
});

describe('AddressesAssignedInconsistent in the policy', () => {
  const assigned = (reason: string) => [
    { type: 'AddressesAssigned', status: 'False', reason, message: 'waiting' },
    { type: 'Programmed', status: 'True', reason: 'Programmed' },
  ];
  const judged = (object: unknown, oldObject: unknown) => {
    const request = statusUpdate(object, oldObject);
    const engine = validateGateway(request, ctx).violations.filter(
      (f) => f.code === 'AddressesAssignedInconsistent',
    );
    const policy = generatePolicies(settings).flatMap((generated) =>
      evaluatePolicy(generated, request, paramsConfigMap(ctx.ranges)).failures.filter(
        (f) => generated.rules[f.index]!.code === 'AddressesAssignedInconsistent',
      ),
    );
    return { engine: engine.length, policy: policy.length };
  };

  it('an inconsistent pair is judged when it changes, not when the stored one is the same (ratcheting)', () => {
    const spec = [ip('10.0.0.1', 'Cluster')];
    const bad = baseGateway({ spec, conditions: assigned('NotAssigned') });
    expect(judged(bad, baseGateway({ spec }))).toEqual({ engine: 1, policy: 1 });
    expect(judged(bad, baseGateway({ spec, conditions: assigned('Pending') }))).toEqual({
      engine: 1,
      policy: 1,
    });
    expect(judged(bad, bad)).toEqual({ engine: 0, policy: 0 });
  });
});

describe('every rule of the policy', () => {
  it('has its catalogue severity, and a static message naming its list and field', () => {
    for (const revision of ['provisional', 'experimental'] as const) {
      for (const rule of policyRules({ ...settings, revision })) {
        expect(rule.severity, rule.code).toBe(CATALOGUE[rule.code].severity);
        if (rule.whole) continue;
        expect(validation(rule).message, rule.code).toMatch(
          new RegExp(`^${rule.list}\\.addresses\\[\\*\\]\\.${rule.field}: `),
        );
      }
    }
  });
});
