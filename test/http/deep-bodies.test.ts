/**
 * Deeply nested bodies: refused before parsing past the apiserver's own limit
 * (10,000 levels), and below it every placement still gets a review, never a 500.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/http/json-depth.js';
import { post, testApp } from '../kit/app.js';

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reviews', `${name}.json`), 'utf8'));
const { app } = testApp();
afterAll(() => app.close());

/** `levels` nested arrays, as text: JSON.stringify itself cannot build them. */
const deepText = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const MARK = '"__deep__"';

/** Every path in the review's object and oldObject (containers and leaves). */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...at, i])));
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
  return out;
}

function withMark(review: Record<string, unknown>, path: (string | number)[]): string {
  const copy = structuredClone(review);
  let parent = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  parent[path.at(-1)!] = '__deep__';
  return JSON.stringify(copy);
}

describe('nesting before parsing', () => {
  const review = fixture('create-allowed');

  it(`refuses a body nested deeper than ${MAX_JSON_DEPTH} levels with a 400`, async () => {
    const body = withMark(review, ['request', 'object', 'metadata', 'annotations']).replace(
      MARK,
      deepText(MAX_JSON_DEPTH),
    );
    const res = await post(app, '/validate', body);
    expect(res.status).toBe(400);
    expect(res.json().error).toBe(`body nests deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it(`judges a body nested exactly ${MAX_JSON_DEPTH} levels`, async () => {
    // The mark sits 4 levels in (envelope, request, object, metadata): 4 + inner = limit.
    const body = withMark(review, ['request', 'object', 'metadata', 'annotations']).replace(
      MARK,
      deepText(MAX_JSON_DEPTH - 4),
    );
    const res = await post(app, '/validate', body);
    expect(res.status).toBe(200);
    expect(res.json().response.uid).toBe(review.request.uid);
  });

  it('counts no brackets inside strings, escaped quotes included', async () => {
    const copy = structuredClone(review);
    copy.request.object.metadata.annotations = { text: `\\"${'['.repeat(MAX_JSON_DEPTH + 10)}` };
    const res = await post(app, '/validate', copy);
    expect(res.status).toBe(200);
  });
});

describe('a value nested up to the limit anywhere in the object gets a review', () => {
  const cases = [
    'create-several-violations',
    'update-ratcheted',
    'status-defaulting',
    'status-dishonest-cluster',
  ];
  for (const name of cases) {
    it(`${name}: every placement, both webhooks`, async () => {
      const review = fixture(name);
      const targets = [
        ...paths(review.request.object, ['request', 'object']),
        ...(review.request.oldObject ? paths(review.request.oldObject, ['request', 'oldObject']) : []),
      ].filter((p) => p.length >= 2);
      expect(targets.length).toBeGreaterThan(10);
      const failures: string[] = [];
      for (const target of targets) {
        // The 5,000 levels, and as deep as the limit lets this placement go
        // (the envelope object adds one level, each path step one more).
        for (const levels of [5_000, MAX_JSON_DEPTH - target.length]) {
          const body = withMark(review, target).replace(MARK, deepText(levels));
          for (const path of ['/validate', '/mutate']) {
            const res = await post(app, path, body);
            if (res.status !== 200 || res.json().response.uid !== review.request.uid)
              failures.push(`${path} ${target.join('.')} ${levels}: HTTP ${res.status}`);
          }
        }
      }
      expect(failures).toEqual([]);
    });
  }
});
