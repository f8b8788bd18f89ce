/**
 * The model's ValidatingAdmissionPolicy plugin (policy/validating/dispatcher.go,
 * validator.go, policy/generic/policy_dispatcher.go CollectParams,
 * policy/matching/matching.go), on real CEL.
 */
import { describe, expect, it } from 'vitest';
import { admit } from './api-server.js';
import { baseCluster, binding, configMap, createOf, gateway, policy, statusOf } from './fixtures.js';
import type { Obj } from './types.js';

/** A policy that reads params: the Gateway's name must be listed in params.data.allowed. */
const PARAM_POLICY = policy('names', {
  paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
  validations: [
    {
      expression: "params.data.allowed.split(',').exists(n, n == object.metadata.name)",
      message: 'name not allowed',
    },
  ],
});

function admitWith(objects: Obj[], write = createOf()) {
  const c = baseCluster();
  c.addNamespace('params');
  for (const o of objects) expect(c.apply(o)).toEqual({ ok: true });
  return admit(c, write);
}

describe('paramRef and parameterNotFoundAction (CollectParams)', () => {
  const ref = (over: Obj) => ({
    paramRef: { name: 'p', namespace: 'params', parameterNotFoundAction: 'Deny', ...over },
  });
  const rows: [string, Obj[], boolean, RegExp?][] = [
    [
      'a param by name in paramRef.namespace',
      [configMap('params', 'p', { allowed: 'gw' }), binding('b', 'names', ref({}))],
      true,
    ],
    [
      'a param that refuses',
      [configMap('params', 'p', { allowed: 'x' }), binding('b', 'names', ref({}))],
      false,
      /name not allowed/,
    ],
    [
      'no param under Deny: a configuration error',
      [binding('b', 'names', ref({}))],
      false,
      /failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction/,
    ],
    [
      'no param under Allow: the binding is skipped',
      [binding('b', 'names', ref({ parameterNotFoundAction: 'Allow' }))],
      true,
    ],
    [
      'no paramRef.namespace: the request namespace',
      [configMap('apps', 'p', { allowed: 'gw' }), binding('b', 'names', ref({ namespace: undefined }))],
      true,
    ],
    [
      'a selector: every matching param is evaluated, one refuses',
      [
        configMap('params', 'p1', { allowed: 'gw' }, { use: 'yes' }),
        configMap('params', 'p2', { allowed: 'x' }, { use: 'yes' }),
        binding('b', 'names', ref({ name: undefined, selector: { matchLabels: { use: 'yes' } } })),
      ],
      false,
    ],
    [
      'a selector matching nothing under Deny',
      [binding('b', 'names', ref({ name: undefined, selector: { matchLabels: { use: 'no' } } }))],
      false,
      /no params found/,
    ],
    ['a policy without paramKind ignores paramRef', [binding('b', 'plain', ref({}))], true],
  ];
  it.each(rows)('%s', async (_, objects, allowed, message) => {
    const plain = policy('plain', { validations: [{ expression: 'params == null' }] });
    const v = await admitWith([PARAM_POLICY, plain, ...objects]);
    expect(v.allowed).toBe(allowed);
    if (message) expect(v.refusal?.message).toMatch(message);
  });
  it('a configuration error refuses whatever the validationActions (Warn, Audit)', async () => {
    const b = binding('b', 'names', { ...ref({}), validationActions: ['Warn', 'Audit'] });
    expect((await admitWith([PARAM_POLICY, b])).allowed).toBe(false);
  });
  it('a configuration error is ignored under the policy failurePolicy Ignore', async () => {
    const p = { ...PARAM_POLICY, spec: { ...(PARAM_POLICY['spec'] as Obj), failurePolicy: 'Ignore' } };
    expect((await admitWith([p, binding('b', 'names', ref({}))])).allowed).toBe(true);
  });
});

describe('validationActions and failurePolicy (validating/dispatcher.go, validator.go)', () => {
  const deny = policy('p', { validations: [{ expression: 'false', message: 'always' }] });
  const broken = (failurePolicy: string) =>
    policy('p', { failurePolicy, validations: [{ expression: 'object.spec.nope == 1', message: 'x' }] });
  const rows: [string, Obj, string[], boolean, number, boolean][] = [
    // [name, policy, actions, allowed, warnings, audit]
    ['Deny refuses', deny, ['Deny'], false, 0, false],
    ['Warn warns and admits', deny, ['Warn'], true, 1, false],
    ['Audit annotates and admits', deny, ['Audit'], true, 0, true],
    ['Warn and Audit together', deny, ['Warn', 'Audit'], true, 1, true],
    [
      'an evaluation error under Fail is a Deny decision: Deny refuses',
      broken('Fail'),
      ['Deny'],
      false,
      0,
      false,
    ],
    ['an evaluation error under Fail with Warn only warns', broken('Fail'), ['Warn'], true, 1, false],
    ['an evaluation error under Ignore admits', broken('Ignore'), ['Deny'], true, 0, false],
  ];
  it.each(rows)('%s', async (_, p, actions, allowed, warnings, audit) => {
    const v = await admitWith([p, binding('b', 'p', { validationActions: actions })]);
    expect(v.allowed).toBe(allowed);
    expect(v.warnings).toHaveLength(warnings);
    expect('validation.policy.admission.k8s.io/validation_failure' in v.auditAnnotations).toBe(audit);
  });
  it('the denial names policy and binding, with reason Invalid (422) unless the validation says', async () => {
    const v = await admitWith([deny, binding('b', 'p')]);
    expect(v.refusal).toMatchObject({
      code: 422,
      message: "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: always",
    });
    const forbidden = policy('p', {
      validations: [{ expression: 'false', message: 'm', reason: 'Forbidden' }],
    });
    expect((await admitWith([forbidden, binding('b', 'p')])).refusal?.code).toBe(403);
  });
});

describe('messages and variables (validator.go, composition.go)', () => {
  const rows: [string, Obj, string][] = [
    [
      'messageExpression wins',
      { expression: 'false', message: 'm', messageExpression: "'from ' + object.metadata.name" },
      'from gw',
    ],
    [
      'an empty messageExpression falls back to message',
      { expression: 'false', message: 'm', messageExpression: "''" },
      'm',
    ],
    ['a multi-line one too', { expression: 'false', message: 'm', messageExpression: "'a\\nb'" }, 'm'],
    ['a failing one too', { expression: 'false', message: 'm', messageExpression: 'object.nope' }, 'm'],
    ['no message: the expression', { expression: ' false ' }, 'failed expression: false'],
  ];
  it.each(rows)('%s', async (_, validation, message) => {
    const v = await admitWith([policy('p', { validations: [validation] }), binding('b', 'p')]);
    expect(v.refusal?.message).toBe(
      `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ${message}`,
    );
  });
  it('variables are evaluated in order, each seeing the ones before', async () => {
    const p = policy('p', {
      variables: [
        { name: 'n', expression: 'object.metadata.name' },
        { name: 'm', expression: "variables.n + '!'" },
      ],
      validations: [{ expression: "variables.m == 'gw!'" }],
    });
    expect((await admitWith([p, binding('b', 'p')])).allowed).toBe(true);
  });
  it('a failing variable is an error only where it is read', async () => {
    const p = policy('p', {
      failurePolicy: 'Fail',
      variables: [{ name: 'bad', expression: 'object.spec.nope' }],
      validations: [{ expression: 'true' }],
    });
    expect((await admitWith([p, binding('b', 'p')])).allowed).toBe(true);
    const reads = policy('p', {
      variables: [{ name: 'bad', expression: 'object.spec.nope' }],
      validations: [{ expression: 'variables.bad == 1' }],
    });
    expect((await admitWith([reads, binding('b', 'p')])).allowed).toBe(false);
  });
  it('request, oldObject and namespaceObject are bound', async () => {
    const p = policy('p', {
      validations: [
        {
          expression:
            "request.subResource == 'status' && oldObject != null && namespaceObject.metadata.labels.team == 'web' && request.userInfo.username.startsWith('system:')",
        },
      ],
    });
    expect((await admitWith([p, binding('b', 'p')], statusOf(gateway()))).allowed).toBe(true);
  });
});

describe('matching (matching.go, policy_matcher.go)', () => {
  const deny = (spec: Obj = {}) => policy('p', { validations: [{ expression: 'false' }], ...spec });
  const rows: [string, Obj, Obj, ReturnType<typeof createOf>, boolean][] = [
    ['matchConstraints match: the binding applies', deny(), {}, createOf(), false],
    [
      'excludeResourceRules win',
      deny({
        matchConstraints: {
          resourceRules: [
            { apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*', '*/*'] },
          ],
          excludeResourceRules: [
            { apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['gateways'] },
          ],
        },
      }),
      {},
      createOf(),
      true,
    ],
    [
      'resourceNames limit the names',
      deny({
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['*'],
              apiVersions: ['*'],
              operations: ['*'],
              resources: ['gateways'],
              resourceNames: ['other'],
            },
          ],
        },
      }),
      {},
      createOf(),
      true,
    ],
    [
      'a policy matching only gateways does not see status writes',
      deny({
        matchConstraints: {
          resourceRules: [
            { apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['gateways'] },
          ],
        },
      }),
      {},
      statusOf(gateway()),
      true,
    ],
    [
      'binding matchResources narrow by namespace',
      deny(),
      { matchResources: { namespaceSelector: { matchLabels: { team: 'db' } } } },
      createOf(),
      true,
    ],
    [
      'binding matchResources by object labels',
      deny(),
      { matchResources: { objectSelector: { matchLabels: { a: 'b' } } } },
      createOf(),
      true,
    ],
    [
      'policy matchConditions false: no decision',
      deny({ matchConditions: [{ name: 'status-only', expression: 'has(request.subResource)' }] }),
      {},
      createOf(),
      true,
    ],
    [
      'policy matchConditions error under Fail: a Deny decision',
      deny({ matchConditions: [{ name: 'bad', expression: 'object.spec.nope == 1' }] }),
      {},
      createOf(),
      false,
    ],
  ];
  it.each(rows)('%s', async (_, p, bindingSpec, write, allowed) => {
    expect((await admitWith([p, binding('b', 'p', bindingSpec)], write)).allowed).toBe(allowed);
  });
  it('a binding of another policy does nothing', async () => {
    expect((await admitWith([deny(), binding('b', 'other')])).allowed).toBe(true);
  });
});
