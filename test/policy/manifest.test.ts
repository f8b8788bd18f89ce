/**
 * The generated objects' fixed parts, field by field (src/policy/generate.ts):
 * the policy frame (params kind, what it matches), the annotations naming the
 * revision and the rules, the binding, the params ConfigMap (label, data with
 * several terminating ranges), the Namespace, the apply paths, and the
 * whole-status rule's variables and validation. The equality tests evaluate
 * the CEL; a field the API server reads but no CEL does is only seen here.
 */
import { describe, expect, it } from 'vitest';
import { ruleVariables, validation, policySpecFrame } from '../../src/policy/generate.js';
import {
  applyPath,
  DEFAULT_POLICY_NAMES,
  generatePolicies,
  paramsConfigMap,
  paramsData,
  policyManifest,
} from '../../src/policy/index.js';
import { policyRules } from '../../src/policy/policy-rules.js';
import { ranges } from '../kit/gateways.js';
import { BASE_POLICY_SETTINGS } from '../kit/policy-eval.js';

const BASE = BASE_POLICY_SETTINGS;

/** A generated policy's annotations. */
const annotations = (policy: unknown): Record<string, string> =>
  (policy as { metadata: { annotations: Record<string, string> } }).metadata.annotations;

describe('the generated objects', () => {
  it('every policy has the same frame: ConfigMap params, Gateway spec and status writes of any version', () => {
    const frame = {
      failurePolicy: 'Ignore',
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: ['gateway.networking.k8s.io'],
            apiVersions: ['*'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['gateways', 'gateways/status'],
          },
        ],
      },
    };
    expect(policySpecFrame()).toEqual(frame);
    for (const g of generatePolicies(BASE)) expect(g.policy.spec).toMatchObject(frame);
  });

  it('each policy is annotated with its revision and the codes of its rules, each once, in order', () => {
    for (const revision of ['provisional', 'experimental'] as const) {
      const generated = generatePolicies({ ...BASE, revision });
      expect(generated.map((g) => g.action)).toEqual(['deny', 'warn']);
      for (const g of generated) {
        const codes = g.rules.map((r) => r.code).filter((c, i, all) => all.indexOf(c) === i);
        expect(codes.length).toBeGreaterThan(1);
        expect(annotations(g.policy)).toEqual({
          'gateway-routability-webhook.io/gep-revision': revision,
          'gateway-routability-webhook.io/rules': codes.join(','),
        });
      }
    }
    // A code that is a rule of both lists (spec and status) is named once.
    const warn = generatePolicies({ ...BASE, specPolicy: 'warn' });
    const all = warn.flatMap((g) => g.rules.map((r) => r.code));
    expect(new Set(all).size).toBeLessThan(all.length);
    for (const g of warn)
      expect(annotations(g.policy)['gateway-routability-webhook.io/rules']!.split(',')).toEqual([
        ...new Set(g.rules.map((r) => r.code)),
      ]);
  });

  it('the params ConfigMap: named, labelled, its ranges comma-separated, the terminating ones listed again', () => {
    const r = ranges(
      '10.96.0.0/12',
      { cidr: '10.100.0.0/16', terminating: true },
      { cidr: 'fd00:10:96::/112', terminating: true },
    );
    expect(paramsConfigMap(r, { name: 'p', paramsName: 'cm', paramsNamespace: 'ns' })).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cm',
        namespace: 'ns',
        labels: { 'app.kubernetes.io/managed-by': 'routability-webhook' },
      },
      data: paramsData(r),
    });
    expect(Object.values(paramsData(r))).toEqual([
      '10.96.0.0/12,10.100.0.0/16,fd00:10:96::/112',
      '10.100.0.0/16,fd00:10:96::/112',
    ]);
    expect(paramsConfigMap(undefined)).not.toHaveProperty('data');
  });

  it('the manifest creates the params Namespace, unless every cluster has it', () => {
    const names = { ...DEFAULT_POLICY_NAMES, paramsNamespace: 'routability' };
    const manifest = policyManifest(generatePolicies(BASE), names, undefined);
    expect(manifest[0]).toEqual({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'routability' } });
    expect(applyPath(manifest[0]!)).toBe('/api/v1/namespaces/routability');
    const inKubeSystem = policyManifest(
      generatePolicies(BASE),
      { ...names, paramsNamespace: 'kube-system' },
      undefined,
    );
    expect(inKubeSystem[0]!['kind']).toBe('ConfigMap');
  });

  it('a ConfigMap without a namespace is applied in default', () => {
    expect(applyPath({ kind: 'ConfigMap', metadata: { name: 'x' } })).toBe(
      '/api/v1/namespaces/default/configmaps/x',
    );
    expect(applyPath({ kind: 'ConfigMap', metadata: { name: 'x', namespace: 'n' } })).toBe(
      '/api/v1/namespaces/n/configmaps/x',
    );
  });

  it('a whole-status rule keeps only its own variables, and every validation has reason Invalid', () => {
    for (const revision of ['provisional', 'experimental'] as const) {
      const rules = policyRules({ ...BASE, revision });
      const whole = rules.filter((r) => r.whole !== undefined);
      expect(whole.map((r) => r.code)).toEqual(['AddressesAssignedInconsistent']);
      for (const rule of whole) {
        expect(ruleVariables(rule, revision)).toEqual(rule.variables ?? []);
        expect(validation(rule)).toEqual({ ...rule.whole, reason: 'Invalid' });
      }
      for (const rule of rules) expect(validation(rule).reason).toBe('Invalid');
    }
  });
});
