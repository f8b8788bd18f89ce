// The webhook matchConditions are CEL evaluated by the apiserver. An evaluation error there makes the
// apiserver apply failurePolicy (Fail: the write is rejected), and `routability` is absent until the
// CRD is patched, so every optional field must be read only behind has(). These tests check that
// statically, plus what each condition is meant to select.
import { beforeAll, describe, expect, it } from 'vitest';
import { helmBinary, one, render } from './helm.js';
import { evalKubeCel } from '../kit/kube-cel.js';

const { skipReason } = helmBinary();
if (skipReason) console.warn(`chart tests skipped: ${skipReason}`);

const MACROS = new Set(['exists', 'all', 'exists_one', 'map', 'filter']);

/**
 * Returns field selections made outside has() whose prefixes are not all tested by a has() in the
 * same expression, e.g. `object.status.addresses` used without `has(object.status)` and
 * `has(object.status.addresses)`.
 */
export function unguardedSelections(expression: string): string[] {
  const guarded = new Set([...expression.matchAll(/has\(\s*([A-Za-z_][\w.]*)\s*\)/g)].map((m) => m[1]));
  const withoutHas = expression.replace(/has\(\s*[A-Za-z_][\w.]*\s*\)/g, 'true');
  const problems: string[] = [];
  for (const match of withoutHas.matchAll(/\b([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*)+)/g)) {
    const root = match[1] as string;
    const fields = (match[2] as string).slice(1).split('.');
    if (MACROS.has(fields.at(-1) as string)) fields.pop();
    for (let i = 1; i <= fields.length; i++) {
      const path = [root, ...fields.slice(0, i)].join('.');
      if (!guarded.has(path)) problems.push(path);
    }
  }
  return [...new Set(problems)];
}

describe('unguardedSelections (the checker itself)', () => {
  it('flags reads that could hit a missing key', () => {
    expect(unguardedSelections('object.spec.addresses.exists(a, a.routability == "Cluster")')).toEqual([
      'object.spec',
      'object.spec.addresses',
      'a.routability',
    ]);
    expect(unguardedSelections("request.subResource == 'status'")).toEqual(['request.subResource']);
  });

  it('accepts reads guarded by has() on every step', () => {
    expect(
      unguardedSelections(
        'has(object.spec) && has(object.spec.addresses) && object.spec.addresses.exists(a, has(a.routability))',
      ),
    ).toEqual([]);
  });
});

describe.skipIf(skipReason !== undefined)('rendered matchConditions', () => {
  it('never read an optional field without has()', async () => {
    const docs = await render();
    const conditions = [
      ...one(docs, 'ValidatingWebhookConfiguration').webhooks[0].matchConditions,
      ...one(docs, 'ValidatingWebhookConfiguration').webhooks[1].matchConditions,
      ...one(docs, 'MutatingWebhookConfiguration').webhooks[0].matchConditions,
    ] as Array<{ name: string; expression: string }>;
    expect(conditions.length).toBe(3);
    for (const { name, expression } of conditions) {
      expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      expect(unguardedSelections(expression), name).toEqual([]);
      // Balanced parentheses: the folded YAML scalar must not have lost anything.
      expect(expression.split('(').length, name).toBe(expression.split(')').length);
      expect(expression).not.toContain('\n');
    }
  });

  it('validating: spec path needs an address naming a routability; status path needs addresses or AddressesAssigned', async () => {
    const docs = await render();
    const [spec, status] = one(docs, 'ValidatingWebhookConfiguration').webhooks.flatMap(
      (w: { matchConditions: Array<{ expression: string }> }) => w.matchConditions,
    ) as Array<{ expression: string }>;
    // The spec condition lets status requests through (the other condition decides for them) ...
    expect(spec?.expression).toMatch(
      /^\(has\(request\.subResource\) && request\.subResource == 'status'\) \|\|/,
    );
    expect(spec?.expression).toContain('object.spec.addresses.exists(a, has(a.routability))');
    // ... and the status condition lets main-resource requests through.
    expect(status?.expression).toMatch(
      /^!\(has\(request\.subResource\) && request\.subResource == 'status'\) \|\|/,
    );
    expect(status?.expression).toContain('size(object.status.addresses) > 0');
    expect(status?.expression).toContain("c.type == 'AddressesAssigned'");
    // oldObject is deliberately not consulted (ratcheting only concerns entries still in object).
    expect(spec?.expression).not.toContain('oldObject');
    expect(status?.expression).not.toContain('oldObject');
  });

  it('mutating: only status with an address lacking routability', async () => {
    const docs = await render();
    const [cond] = one(docs, 'MutatingWebhookConfiguration').webhooks[0].matchConditions as Array<{
      expression: string;
    }>;
    expect(cond?.expression).toContain('object.status.addresses.exists(a, !has(a.routability))');
  });
});

// ---- behaviour: the conditions evaluated (by @bufbuild/cel, test/kit/kube-cel.ts) on representative requests ----

type Outcome = 'call' | 'skip' | 'error';

/** All conditions must be true for the apiserver to call the webhook; an error means failurePolicy. */
function outcome(conditions: Array<{ expression: string }>, env: Record<string, unknown>): Outcome {
  let result: Outcome = 'call';
  for (const { expression } of conditions) {
    const r = evalKubeCel(expression, env);
    if (!r.ok) return 'error';
    if (r.value !== true) result = 'skip';
  }
  return result;
}

const gateway = (spec: Record<string, unknown>, status?: Record<string, unknown>) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'gw', namespace: 'apps' },
  spec: { gatewayClassName: 'example', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }], ...spec },
  ...(status ? { status } : {}),
});
// The admission request as CEL sees it: omitempty drops an empty subResource, so test both shapes.
const mainRequests = [{ operation: 'UPDATE' }, { operation: 'UPDATE', subResource: '' }];
const statusRequest = { operation: 'UPDATE', subResource: 'status' };

/** What the evaluator makes of one expression: its value, or 'error'. */
const evaluated = (expression: string, env: Record<string, unknown>) => {
  const r = evalKubeCel(expression, env);
  return r.ok ? r.value : 'error';
};

describe('the CEL semantics these conditions rely on (real evaluator)', () => {
  it('missing keys error, has() does not, && and || absorb errors, exists() errs only without a true', () => {
    expect(evaluated('object.a == 1', { object: {} })).toBe('error');
    expect(evaluated('has(object.a)', { object: {} })).toBe(false);
    expect(evaluated('false && object.a == 1', { object: {} })).toBe(false);
    expect(evaluated('object.a == 1 && false', { object: {} })).toBe(false);
    expect(evaluated('object.a == 1 || true', { object: {} })).toBe(true);
    expect(evaluated('object.a == 1 || false', { object: {} })).toBe('error');
    expect(evaluated("x.exists(a, a.k == 'v')", { x: [{}, { k: 'v' }] })).toBe(true);
    expect(evaluated("x.exists(a, a.k == 'v')", { x: [{}, { k: 'w' }] })).toBe('error');
    expect(evaluated('size(x) > 0 && !has(y.z)', { x: [1], y: {} })).toBe(true);
  });
});

describe.skipIf(skipReason !== undefined)('matchConditions on representative requests', () => {
  let entries: Array<{
    rules: Array<{ resources: string[] }>;
    matchConditions: Array<{ expression: string }>;
  }>;
  let mutating: Array<{ expression: string }>;
  beforeAll(async () => {
    const docs = await render();
    entries = one(docs, 'ValidatingWebhookConfiguration').webhooks;
    mutating = one(docs, 'MutatingWebhookConfiguration').webhooks[0].matchConditions;
  });
  /** The validating conditions the apiserver evaluates for a request: those of the entry whose rules match it. */
  const conditionsFor = (env: { request: { subResource?: string } }) => {
    const resource = env.request.subResource ? `gateways/${env.request.subResource}` : 'gateways';
    const entry = entries.find((e) => e.rules.some((r) => r.resources.includes(resource)));
    if (!entry) throw new Error(`no validating entry for ${resource}`);
    return entry.matchConditions;
  };
  const validating = {
    outcome: (env: Record<string, unknown> & { request: { subResource?: string } }) =>
      outcome(conditionsFor(env), env),
  };

  const spec = {
    noAddresses: gateway({}),
    // What the webhook sees before the CRD is patched: the apiserver pruned routability.
    unpatchedCrd: gateway({ addresses: [{ type: 'IPAddress', value: '10.96.0.10' }] }),
    valueless: gateway({ addresses: [{ type: 'IPAddress' }] }),
    withRoutability: gateway({
      addresses: [
        { type: 'IPAddress', value: '192.0.2.1' },
        { type: 'IPAddress', value: '10.96.0.10', routability: 'Cluster' },
      ],
    }),
    withoutSpec: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw' } },
  };

  it.each([
    ['a Gateway without addresses', spec.noAddresses, 'skip'],
    ['addresses without routability (CRD not patched)', spec.unpatchedCrd, 'skip'],
    ['a value-less address (conformance)', spec.valueless, 'skip'],
    ['an address naming a routability', spec.withRoutability, 'call'],
    ['an object without spec', spec.withoutSpec, 'skip'],
  ] as const)('validating, gateways CREATE/UPDATE: %s -> %s', (_label, object, expected) => {
    for (const request of mainRequests) {
      expect(validating.outcome({ object, oldObject: null, request })).toBe(expected);
      expect(validating.outcome({ object, oldObject: object, request })).toBe(expected);
    }
  });

  it.each([
    ['no status at all', gateway({}), 'skip'],
    ['empty status addresses', gateway({}, { addresses: [] }), 'skip'],
    [
      'conditions without AddressesAssigned',
      gateway({}, { conditions: [{ type: 'Accepted', status: 'True' }] }),
      'skip',
    ],
    [
      'status addresses without routability (unset means External)',
      gateway({}, { addresses: [{ type: 'IPAddress', value: '203.0.113.7' }] }),
      'call',
    ],
    [
      'an AddressesAssigned condition only',
      gateway({}, { conditions: [{ type: 'AddressesAssigned', status: 'False', reason: 'NotAssigned' }] }),
      'call',
    ],
    [
      'a condition without a type (malformed, still no error)',
      gateway({}, { conditions: [{ status: 'True' }] }),
      'skip',
    ],
  ] as const)('validating, gateways/status UPDATE: %s -> %s', (_label, object, expected) => {
    expect(validating.outcome({ object, oldObject: object, request: statusRequest })).toBe(expected);
  });

  it('validating: spec routability does not trigger a status call, nor status addresses a main-resource call', () => {
    const specOnly = spec.withRoutability;
    expect(validating.outcome({ object: specOnly, oldObject: specOnly, request: statusRequest })).toBe(
      'skip',
    );
    const statusOnly = gateway({}, { addresses: [{ type: 'IPAddress', value: '203.0.113.7' }] });
    for (const request of mainRequests) {
      expect(validating.outcome({ object: statusOnly, oldObject: statusOnly, request })).toBe('skip');
    }
  });

  it.each([
    ['no status', gateway({}), 'skip'],
    [
      'an address lacking routability',
      gateway(
        {},
        {
          addresses: [
            { type: 'IPAddress', value: '203.0.113.7', routability: 'External' },
            { type: 'Hostname', value: 'gw.example.com' },
          ],
        },
      ),
      'call',
    ],
    [
      'every address has routability (idempotent: nothing to do)',
      gateway({}, { addresses: [{ type: 'IPAddress', value: '203.0.113.7', routability: 'External' }] }),
      'skip',
    ],
    ['empty status addresses', gateway({}, { addresses: [] }), 'skip'],
  ] as const)('mutating, gateways/status UPDATE: %s -> %s', (_label, object, expected) => {
    expect(outcome(mutating, { object, oldObject: object, request: statusRequest })).toBe(expected);
  });

  it('no condition errors on any Gateway of the shapes above, whatever the subresource', () => {
    const objects = [
      ...Object.values(spec),
      gateway(
        {},
        {
          addresses: [{ type: 'IPAddress', value: '203.0.113.7' }],
          conditions: [{ type: 'AddressesAssigned' }],
        },
      ),
    ];
    for (const object of objects) {
      for (const request of [...mainRequests, statusRequest]) {
        expect(validating.outcome({ object, oldObject: null, request })).not.toBe('error');
        expect(outcome(mutating, { object, oldObject: null, request })).not.toBe('error');
      }
    }
  });
});
