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
import { baseGateway, context, create, statusUpdate, type Address } from '../kit/gateways.js';
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

/** Per code, the policy's message and the engine's first, for one write under the settings. */
function perCode(
  request: ReturnType<typeof create>,
  over: Partial<PolicySettings> = {},
): { policy: Map<string, string>; engine: Map<string, string> } {
  const s = { ...settings, ...over };
  const c = context({ clusterDomain: s.clusterDomain, allowedRoutability: s.allowedRoutability });
  const engine = new Map<string, string>();
  const result = validateGateway(request, c);
  for (const f of [...result.violations, ...result.warned])
    if (!engine.has(f.code)) engine.set(f.code, f.message);
  const policy = new Map<string, string>();
  for (const generated of generatePolicies(s)) {
    const verdict = evaluatePolicy(generated, request, paramsConfigMap(c.ranges));
    expect(verdict.errors).toEqual([]);
    for (const f of verdict.failures) {
      const code = generated.rules[f.index]!.code;
      if (!policy.has(code)) policy.set(code, f.message);
    }
  }
  return { policy, engine };
}

const host = (value: string, routability?: string): Address => ({
  type: 'Hostname',
  value,
  ...(routability === undefined ? {} : { routability }),
});

describe('the per-entry rules in the policy: the engine’s message word for word', () => {
  const cases: [string, Address, string, Partial<PolicySettings>?][] = [
    ['a bad IP asked as Cluster', ip('10.0.0.300', 'Cluster'), 'AddressValueInvalid'],
    ['a bad IP asked as External', ip('10.0.0.300', 'External'), 'AddressValueInvalid'],
    ['a bad IP, routability unset', ip('10.0.0.300'), 'AddressValueInvalid'],
    [
      'a service-range IP asked as External',
      ip('10.96.0.10', 'External'),
      'ExternalAddressInsideServiceRange',
    ],
    ['a service-range IP, routability unset', ip('10.96.0.10'), 'ExternalAddressInsideServiceRange'],
    [
      'a cluster-domain name asked as External',
      host('web.cluster.local', 'External'),
      'ExternalHostnameInClusterDomain',
    ],
    [
      'a cluster-domain name, routability unset',
      host('web.cluster.local'),
      'ExternalHostnameInClusterDomain',
    ],
    ['the cluster domain itself, fully qualified', host('cluster.local.'), 'ExternalHostnameInClusterDomain'],
    [
      'a cluster domain given with a dot and capitals',
      host('web.Example.Internal'),
      'ExternalHostnameInClusterDomain',
      { clusterDomain: 'Example.Internal.' },
    ],
  ];
  it.each(cases)('%s', (_, entry, code, over) => {
    // An unset routability is read as External in status only (provisional); in spec it is the implementation's.
    const status = statusUpdate(baseGateway({ status: [entry] }), baseGateway());
    const spec = create(baseGateway({ spec: [entry] }));
    for (const request of entry['routability'] === undefined ? [status] : [spec, status]) {
      const { policy, engine } = perCode(request, over);
      expect(engine.get(code), request.subResource).toBeDefined();
      expect(policy.get(code), request.subResource).toBe(engine.get(code));
    }
  });

  it('a fully qualified name outside the cluster domain is no finding', () => {
    for (const value of ['web.example.com.', 'cluster.local.example.', 'notcluster.local.']) {
      const { policy, engine } = perCode(create(baseGateway({ spec: [host(value, 'External')] })));
      expect([...engine.keys()], value).toEqual([]);
      expect([...policy.keys()], value).toEqual([]);
    }
  });

  it('an allow-list names its values sorted', () => {
    const allowedRoutability = new Set(['example.com/Zeta', 'example.com/Alpha']);
    const request = create(baseGateway({ spec: [ip('203.0.113.1', 'example.com/Other')] }));
    const { policy, engine } = perCode(request, { allowedRoutability });
    const code = [...engine.keys()].find((k) => k !== 'RoutabilityMismatch')!;
    expect(engine.get(code)).toMatch(/example\.com\/Alpha.*example\.com\/Zeta/);
    expect(policy.get(code)).toBe(engine.get(code));
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
