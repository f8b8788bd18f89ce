/**
 * The model's matching rules, each row with the kube-apiserver behaviour it
 * follows (the files are cited in each module and in README.md).
 */
import { describe, expect, it } from 'vitest';
import { createOf, gateway, statusOf } from './fixtures.js';
import { selectorMatches } from './label-selector.js';
import { evaluateMatchConditions } from './match-conditions.js';
import { celBindings } from './request.js';
import { matchedVersion, requestResource, ruleMatches, type Rule } from './rules.js';

const RULE: Rule = {
  apiGroups: ['gateway.networking.k8s.io'],
  apiVersions: ['v1'],
  operations: ['CREATE', 'UPDATE'],
  resources: ['gateways'],
  scope: 'Namespaced',
};

describe('rules (predicates/rules/rules.go)', () => {
  const status = statusOf(gateway());
  const rows: [string, Rule, ReturnType<typeof createOf>, boolean][] = [
    ['"gateways" matches the main resource', RULE, createOf(), true],
    ['"gateways" never matches the status subresource', RULE, status, false],
    [
      '"gateways/status" matches the status subresource',
      { ...RULE, resources: ['gateways/status'] },
      status,
      true,
    ],
    ['"gateways/*" matches the status subresource', { ...RULE, resources: ['gateways/*'] }, status, true],
    ['"*/*" matches the status subresource', { ...RULE, resources: ['*/*'] }, status, true],
    ['"*" matches only main resources', { ...RULE, resources: ['*'] }, status, false],
    ['an operation not listed does not match', { ...RULE, operations: ['UPDATE'] }, createOf(), false],
    ['operation "*" matches every operation', { ...RULE, operations: ['*'] }, createOf(), true],
    ['another group does not match', { ...RULE, apiGroups: ['apps'] }, createOf(), false],
    ['scope Cluster does not match a namespaced write', { ...RULE, scope: 'Cluster' }, createOf(), false],
    ['scope "*" matches a namespaced write', { ...RULE, scope: '*' }, createOf(), true],
    ['no scope matches every scope', { ...RULE, scope: undefined }, createOf(), true],
  ];
  it.each(rows)('%s', (_, rule, write, expected) => {
    expect(ruleMatches(rule, requestResource(write))).toBe(expected);
  });

  it('matchPolicy Equivalent invokes a v1-only rule for a v1beta1 write, with the v1 version', () => {
    expect(matchedVersion([RULE], 'Equivalent', createOf(gateway(), { version: 'v1beta1' }))).toBe('v1');
  });
  it('matchPolicy Exact does not', () => {
    expect(matchedVersion([RULE], 'Exact', createOf(gateway(), { version: 'v1beta1' }))).toBeUndefined();
  });
  it('an unset matchPolicy is Equivalent (the v1 API default)', () => {
    expect(matchedVersion([RULE], undefined, createOf(gateway(), { version: 'v1beta1' }))).toBe('v1');
  });
  it('the request version comes first when a rule lists it', () => {
    const both = { ...RULE, apiVersions: ['v1', 'v1beta1'] };
    expect(matchedVersion([both], 'Equivalent', createOf(gateway(), { version: 'v1beta1' }))).toBe('v1beta1');
  });
});

describe('label selectors (apimachinery LabelSelectorAsSelector)', () => {
  const name = (n: string) => ({ 'kubernetes.io/metadata.name': n, team: 'web' });
  const notIn = {
    matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }],
  };
  const rows: [string, unknown, Record<string, string>, boolean][] = [
    ['NotIn excludes a listed namespace', notIn, name('kube-system'), false],
    ['NotIn admits another namespace', notIn, name('apps'), true],
    ['NotIn matches a missing key', notIn, {}, true],
    ['In needs the key', { matchExpressions: [{ key: 'team', operator: 'In', values: ['web'] }] }, {}, false],
    [
      'In matches a listed value',
      { matchExpressions: [{ key: 'team', operator: 'In', values: ['web'] }] },
      name('a'),
      true,
    ],
    ['Exists needs the key', { matchExpressions: [{ key: 'x', operator: 'Exists' }] }, name('a'), false],
    [
      'DoesNotExist needs it absent',
      { matchExpressions: [{ key: 'x', operator: 'DoesNotExist' }] },
      name('a'),
      true,
    ],
    [
      'matchLabels and matchExpressions are ANDed',
      { matchLabels: { team: 'db' }, ...notIn },
      name('apps'),
      false,
    ],
    ['an empty selector matches everything', {}, {}, true],
    ['a nil selector matches everything', undefined, {}, true],
  ];
  it.each(rows)('%s', (_, selector, labels, expected) => {
    expect(selectorMatches(selector, labels)).toBe(expected);
  });
  it('an unknown operator is an error, not a silent match', () => {
    expect(() => selectorMatches({ matchExpressions: [{ key: 'a', operator: 'Has' }] }, {})).toThrow(
      /not a valid/,
    );
  });
});

describe('matchConditions (matchconditions/matcher.go) on real CEL', () => {
  const bindings = celBindings({ write: statusOf(gateway()), version: 'v1', object: gateway() });
  const T = { name: 't', expression: "request.subResource == 'status'" };
  const F = { name: 'f', expression: '!has(request.subResource)' };
  const E = { name: 'e', expression: 'object.spec.nope.x == 1' };
  const rows: [string, { name: string; expression: string }[], string, string][] = [
    ['all true: the hook is called', [T], 'Fail', 'match'],
    ['one false: skipped', [T, F], 'Fail', 'skip'],
    ['false wins over an error, under Fail too', [E, F], 'Fail', 'skip'],
    ['true and an error under Fail: the write is refused', [T, E], 'Fail', 'error'],
    ['true and an error under Ignore: skipped', [T, E], 'Ignore', 'skip'],
    ['an unset failurePolicy is Fail', [E], '', 'error'],
    ['no conditions: called', [], 'Fail', 'match'],
  ];
  it.each(rows)('%s', (_, conditions, failurePolicy, expected) => {
    expect(evaluateMatchConditions(conditions, bindings, failurePolicy || undefined).kind).toBe(expected);
  });
  it('request.userInfo and request.dryRun are there for a condition', () => {
    const b = celBindings({ write: createOf(gateway(), { dryRun: true }), version: 'v1', object: gateway() });
    const c = [{ name: 'u', expression: "request.userInfo.username == 'alice' && request.dryRun" }];
    expect(evaluateMatchConditions(c, b, 'Fail').kind).toBe('match');
  });
});
