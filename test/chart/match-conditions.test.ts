// The webhook matchConditions are CEL evaluated by the apiserver. An evaluation error there makes the
// apiserver apply failurePolicy (Fail: the write is rejected), and `routability` is absent until the
// CRD is patched, so every optional field must be read only behind has(). These tests check that
// statically, plus what each condition is meant to select.
import { describe, expect, it } from 'vitest';
import { helmBinary, one, render } from './helm.js';

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
    const [spec, status] = one(docs, 'ValidatingWebhookConfiguration').webhooks[0].matchConditions as Array<{
      expression: string;
    }>;
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
