/**
 * Proof that the generated ValidatingAdmissionPolicy agrees with the engine.
 * Every row of the engine's rule tables (spec, status, review fixes), every
 * golden fixture review, upstream's 16 experimental values and random
 * Gateways run through both: the engine (validateGateway) and the generated
 * policies under the real CEL evaluator with Kubernetes' libraries. For the
 * rules in the policy's scope they must deny the same requests, warn on the
 * same ones, and name the same field (the first offending entry of each
 * rule). Rows the Gateway CRD would refuse before any policy runs are left
 * out, and so are IPv4-mapped IPv6 values (Kubernetes' ip() refuses them; the
 * policy leaves them to the webhook): there the policy must only never be
 * stricter than the engine.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generatePolicies, paramsConfigMap, type PolicySettings } from '../../src/policy/index.js';
import { validateGateway, type GatewayRequest, type RuleContext } from '../../src/rules/index.js';
import { FIXTURE_SETTINGS } from '../kit/app.js';
import { baseGateway, context, create, DUAL_STACK, ranges, statusUpdate, update } from '../kit/gateways.js';
import { evaluatePolicy } from '../kit/policy-eval.js';
import { rows as fixRows, requestOf } from '../rules/rows/revision-and-review-fixes.js';
import { rows as specRows } from '../rules/rows/spec-rules.js';
import { rows as statusRows } from '../rules/rows/status-rules.js';

interface Case {
  readonly name: string;
  readonly request: GatewayRequest;
  readonly ctx: RuleContext;
}

const settingsOf = (ctx: RuleContext): PolicySettings => ({
  revision: ctx.revision ?? 'provisional',
  specPolicy: ctx.specPolicy,
  statusPolicy: ctx.statusPolicy,
  clusterDomain: ctx.clusterDomain,
  allowedRoutability: ctx.allowedRoutability,
});

/** `CODE@list -> field of the first finding`, per action. */
type Named = Record<string, string>;
interface Outcome {
  readonly deny: Named;
  readonly warn: Named;
  readonly outOfScopeDenial: boolean;
  readonly errors: readonly string[];
}

const listOf = (field: string) => (field.startsWith('spec.') ? 'spec' : 'status');

function firstByRule(
  findings: readonly { code: string; field: { toString(): string } }[],
  scope: Set<string>,
) {
  const out: Named = {};
  for (const f of findings) {
    const key = `${f.code}@${listOf(f.field.toString())}`;
    if (scope.has(key) && !(key in out)) out[key] = f.field.toString();
  }
  return out;
}

function policyOutcome(c: Case): Outcome & { scope: Set<string> } {
  const settings = settingsOf(c.ctx);
  const params = paramsConfigMap(c.ctx.ranges);
  const deny: Named = {};
  const warn: Named = {};
  const errors: string[] = [];
  const scope = new Set<string>();
  for (const generated of generatePolicies(settings)) {
    for (const r of generated.rules) scope.add(`${r.code}@${r.list}`);
    const verdict = evaluatePolicy(generated, c.request, params);
    errors.push(...verdict.errors);
    if (verdict.errors.length > 0) errors.push(...verdict.variableErrors);
    for (const f of verdict.failures) {
      const rule = generated.rules[f.index]!;
      (generated.action === 'deny' ? deny : warn)[`${rule.code}@${rule.list}`] = f.message.split(': ')[0]!;
    }
  }
  return { deny, warn, errors, outOfScopeDenial: false, scope };
}

/**
 * Where the policy is designed to be less strict than the engine, and only there (never stricter):
 * under warn on both lists nothing denies (invalid values are warned about: no `-deny` binding); with
 * no range known (empty params) ClusterAddressOutsideServiceRange does not fire, as ranges the policy
 * cannot see are not ranges that do not exist.
 */
function asThePolicyDecides(outcome: Outcome, ctx: RuleContext): Outcome {
  const unknownRanges = (key: string) =>
    ctx.ranges.all.length === 0 && key.startsWith('ClusterAddressOutsideServiceRange@');
  const keep = (named: Named) => Object.fromEntries(Object.entries(named).filter(([k]) => !unknownRanges(k)));
  if (ctx.specPolicy === 'warn' && ctx.statusPolicy === 'warn')
    return { ...outcome, deny: {}, warn: keep({ ...outcome.deny, ...outcome.warn }) };
  return { ...outcome, deny: keep(outcome.deny), warn: keep(outcome.warn) };
}

function engineOutcome(c: Case, scope: Set<string>): Outcome {
  const result = validateGateway(c.request, c.ctx);
  const inScope = (f: { code: string; field: { toString(): string } }) =>
    scope.has(`${f.code}@${listOf(f.field.toString())}`);
  return asThePolicyDecides(
    {
      deny: firstByRule(result.violations, scope),
      warn: firstByRule(result.warned, scope),
      outOfScopeDenial: result.violations.some((f) => !inScope(f)),
      errors: [],
    },
    c.ctx,
  );
}

/** What the Gateway CRD's schema refuses (or prunes) before admission policies run. */
function crdAdmits(object: unknown): boolean {
  const o = object as { spec?: { addresses?: unknown }; status?: { addresses?: unknown } };
  for (const list of [o?.spec?.addresses, o?.status?.addresses]) {
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list) || list.length > 16) return false;
    for (const a of list) {
      if (a === null || typeof a !== 'object' || Array.isArray(a)) return false;
      for (const key of ['type', 'value', 'routability'])
        if (key in a && a[key] !== null && typeof a[key] !== 'string') return false;
    }
  }
  return true;
}

const MAPPED = /^[0:]*:ffff:/i;
function hasMapped(object: unknown): boolean {
  const o = object as { spec?: { addresses?: unknown[] }; status?: { addresses?: unknown[] } };
  return [...(o?.spec?.addresses ?? []), ...(o?.status?.addresses ?? [])].some(
    (a) =>
      typeof (a as { value?: unknown })?.value === 'string' && MAPPED.test((a as { value: string }).value),
  );
}

function tableCases(): Case[] {
  const out: Case[] = [];
  for (const row of specRows)
    out.push({
      name: `spec: ${row.name}`,
      request: create(baseGateway({ spec: [row.address] })),
      ctx: context(row.ctx),
    });
  for (const row of statusRows) {
    const gw = baseGateway({
      ...(row.spec ? { spec: row.spec } : {}),
      ...(row.status ? { status: row.status } : {}),
      ...(row.conditions ? { conditions: row.conditions } : {}),
    });
    out.push({
      name: `status: ${row.name}`,
      request: statusUpdate(gw, baseGateway({ spec: row.spec ?? [] })),
      ctx: context(row.ctx),
    });
  }
  for (const row of fixRows) out.push({ name: `fixes: ${row.name}`, ...requestOf(row) });
  return out;
}

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'reviews');
function fixtureCases(): Case[] {
  const ctx = context({
    ranges: DUAL_STACK,
    specPolicy: FIXTURE_SETTINGS.specPolicy,
    statusPolicy: FIXTURE_SETTINGS.statusPolicy,
  });
  const out: Case[] = [];
  for (const file of readdirSync(FIXTURES).filter((f) => f.endsWith('.json'))) {
    const review = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as {
      request: GatewayRequest & { resource: { resource: string } };
    };
    if (review.request.resource.resource !== 'gateways') continue;
    out.push({ name: `fixture ${file}`, request: review.request, ctx });
  }
  return out;
}

const UPSTREAM = JSON.parse(
  readFileSync(
    join(import.meta.dirname, '..', 'fixtures', 'upstream', 'gep-5093-upstream', 'crd-validation-cases.json'),
    'utf8',
  ),
) as { cases: { routability: string }[] };
function upstreamCases(): Case[] {
  const ctx = context({ revision: 'experimental', ranges: ranges('10.96.0.0/12') });
  return UPSTREAM.cases.flatMap(({ routability }) => [
    {
      name: `upstream spec ${JSON.stringify(routability)}`,
      request: create(baseGateway({ spec: [{ type: 'IPAddress', value: '1.2.3.4', routability }] })),
      ctx,
    },
    {
      name: `upstream status ${JSON.stringify(routability)}`,
      request: statusUpdate(baseGateway({ status: [{ type: 'IPAddress', value: '1.2.3.4', routability }] })),
      ctx,
    },
  ]);
}

/** Ratcheting: unchanged entries are not re-judged, changed ones are (ratcheting.test.ts, as rows). */
function ratchetCases(): Case[] {
  const moved = context({ ranges: ranges('10.128.0.0/16') });
  const cluster = { type: 'IPAddress', value: '10.96.0.10', routability: 'Cluster' };
  const old = baseGateway({ spec: [cluster] });
  return [
    { name: 'ratchet: unchanged entry', request: update(baseGateway({ spec: [cluster] }), old), ctx: moved },
    {
      name: 'ratchet: moved to another index',
      request: update(baseGateway({ spec: [{ value: '8.8.8.8' }, cluster] }), old),
      ctx: moved,
    },
    {
      name: 'ratchet: changed value',
      request: update(baseGateway({ spec: [{ ...cluster, value: '10.96.0.11' }] }), old),
      ctx: moved,
    },
    {
      name: 'ratchet: implicit type made explicit',
      request: update(baseGateway({ spec: [{ value: '10.96.0.10', routability: 'Cluster' }] }), old),
      ctx: moved,
    },
    { name: 'ratchet: CREATE never ratchets', request: create(baseGateway({ spec: [cluster] })), ctx: moved },
    {
      name: 'ratchet: IPv6 compared canonically',
      request: update(
        baseGateway({ spec: [{ value: 'FD00:10:96::A', routability: 'Cluster' }] }),
        baseGateway({ spec: [{ value: 'fd00:10:96::a', routability: 'Cluster' }] }),
      ),
      ctx: moved,
    },
    {
      name: 'ratchet: status stored unset equals External',
      request: statusUpdate(
        baseGateway({ status: [{ value: '10.128.0.5', routability: 'External' }] }),
        baseGateway({ status: [{ value: '10.128.0.5' }] }),
      ),
      ctx: context({ ranges: ranges('10.128.0.0/16'), statusPolicy: 'enforce' }),
    },
    ...[false, true].map((changed) => {
      // RoutabilityMismatch ratchets per status entry too: a stored substitution is not re-judged.
      const spec = [{ routability: 'Cluster' }];
      const stored = { value: '203.0.113.10', routability: 'External' };
      const now = changed ? { ...stored, value: '203.0.113.11' } : stored;
      return {
        name: `ratchet: RoutabilityMismatch on ${changed ? 'a changed' : 'an unchanged'} status entry`,
        request: statusUpdate(
          baseGateway({ spec, status: [{ value: '10.96.0.1', routability: 'Cluster' }, now] }),
          baseGateway({ spec, status: [stored] }),
        ),
        ctx: context(),
      };
    }),
    ...[false, true].map((changed) => {
      // AddressesAssignedInconsistent ratchets by the condition pair: an unchanged pair is not re-judged.
      const stored = [
        { type: 'AddressesAssigned', status: 'True', reason: 'PartiallyAssigned', message: 'x' },
      ];
      const now = changed ? [{ ...stored[0], message: 'y' }] : stored;
      return {
        name: `ratchet: AddressesAssignedInconsistent on ${changed ? 'a changed' : 'an unchanged'} condition pair`,
        request: statusUpdate(
          baseGateway({ status: [{ value: '203.0.113.10' }], conditions: now }),
          baseGateway({ conditions: stored }),
        ),
        ctx: context(),
      };
    }),
  ];
}

function compare(c: Case) {
  const policy = policyOutcome(c);
  const engine = engineOutcome(c, policy.scope);
  return { policy, engine };
}

const ALL = [...tableCases(), ...fixtureCases(), ...upstreamCases(), ...ratchetCases()];
const admitted = ALL.filter((c) => crdAdmits(c.request.object) && !hasMapped(c.request.object));

describe('generated policy = engine, on every table row and fixture in scope', () => {
  it('has cases of every kind, most of them in scope', () => {
    expect(specRows.length + statusRows.length + fixRows.length).toBeGreaterThan(120);
    expect(fixtureCases().length).toBeGreaterThanOrEqual(15);
    expect(admitted.length).toBeGreaterThan(ALL.length * 0.8);
    // Both ways: rows the policy denies, and rows it allows.
    const outcomes = admitted.map((c) => compare(c));
    expect(outcomes.filter((o) => Object.keys(o.policy.deny).length > 0).length).toBeGreaterThan(40);
    expect(outcomes.filter((o) => Object.keys(o.policy.warn).length > 0).length).toBeGreaterThanOrEqual(2);
    expect(outcomes.filter((o) => Object.keys(o.policy.deny).length === 0).length).toBeGreaterThan(40);
  });

  it.each(admitted.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const { policy, engine } = compare(c);
    expect(policy.errors).toEqual([]);
    expect(policy.deny).toEqual(engine.deny);
    expect(policy.warn).toEqual(engine.warn);
  });

  it('the status-against-spec rules give the engine’s message word for word', () => {
    const codes = new Set(['RoutabilityMismatch', 'AddressesAssignedInconsistent']);
    let compared = 0;
    for (const c of admitted.filter((x) => x.request.subResource === 'status')) {
      const result = validateGateway(c.request, c.ctx);
      const engine = new Map<string, string>();
      for (const f of [...result.violations, ...result.warned])
        if (codes.has(f.code) && !engine.has(f.code)) engine.set(f.code, f.message);
      for (const generated of generatePolicies(settingsOf(c.ctx)))
        for (const f of evaluatePolicy(generated, c.request, paramsConfigMap(c.ctx.ranges)).failures) {
          const code = generated.rules[f.index]!.code;
          if (!codes.has(code)) continue;
          expect(f.message, c.name).toBe(engine.get(code));
          compared++;
        }
    }
    expect(compared).toBeGreaterThan(20);
  });

  it('where the policy leaves a value to the webhook (mapped IPv6, CRD-refused shapes) it is never stricter', () => {
    for (const c of ALL.filter((x) => !admitted.includes(x) && crdAdmits(x.request.object))) {
      const { policy, engine } = compare(c);
      expect(policy.errors, c.name).toEqual([]);
      for (const [key, field] of Object.entries(policy.deny)) expect(engine.deny[key], c.name).toBe(field);
    }
  });
});

// ---- random Gateways: the tables cannot think of everything ----

const addressValue = fc.oneof(
  fc.constantFrom(
    '10.96.0.10',
    '10.96.0.0',
    '10.111.255.255',
    '10.112.0.1',
    '203.0.113.7',
    '8.8.8.8',
    'fd00:10:96::5',
    'fd00:10:96::',
    'FD00:10:96::A',
    '2001:db8::1',
    '10.096.0.1',
    '10.96.0.0/12',
    'gw.apps.svc.cluster.local',
    'gw.example.com',
    'CLUSTER.LOCAL.',
    'not an ip',
  ),
  fc.ipV4(),
);
const address = fc.record(
  {
    type: fc.constantFrom('IPAddress', 'Hostname', 'NamedAddress', 'example.com/custom'),
    value: addressValue,
    routability: fc.constantFrom(
      'Cluster',
      'External',
      '',
      'example.com/CorpWan',
      'example.com/Other',
      'cluster',
      'k8s.io/x',
      'testing.x-k8s.io/sentinel',
    ),
  },
  { requiredKeys: [] },
);
const list = fc.array(address, { maxLength: 5 });
const ctxArb = fc.record({
  revision: fc.constantFrom('provisional' as const, 'experimental' as const),
  specPolicy: fc.constantFrom('enforce' as const, 'warn' as const),
  statusPolicy: fc.constantFrom('enforce' as const, 'warn' as const),
  ranges: fc.constantFrom(
    DUAL_STACK,
    ranges('10.96.0.0/12'),
    ranges({ cidr: '10.96.0.0/12', terminating: true }, '10.100.0.0/16'),
    ranges('10.96.0.0/31', '10.96.0.8/30'),
    ranges(),
  ),
  allowed: fc.constantFrom(undefined, new Set(['example.com/CorpWan'])),
});

describe('generated policy = engine, on random Gateways', () => {
  it('spec writes (CREATE and UPDATE) and status writes agree', () => {
    const kinds = fc.constantFrom('create' as const, 'update' as const, 'status' as const);
    fc.assert(
      fc.property(ctxArb, list, list, list, kinds, (k, now, before, status, kind) => {
        const ctx = context({
          revision: k.revision,
          specPolicy: k.specPolicy,
          statusPolicy: k.statusPolicy,
          ranges: k.ranges,
          allowedRoutability: k.allowed,
        });
        const request =
          kind === 'create'
            ? create(baseGateway({ spec: now }))
            : kind === 'update'
              ? update(baseGateway({ spec: now }), baseGateway({ spec: before }))
              : statusUpdate(baseGateway({ spec: now, status }), baseGateway({ spec: now, status: before }));
        const { policy, engine } = compare({ name: 'random', request, ctx });
        expect(policy.errors).toEqual([]);
        expect(policy.deny).toEqual(engine.deny);
        expect(policy.warn).toEqual(engine.warn);
      }),
      { numRuns: 300 },
    );
  });
});
