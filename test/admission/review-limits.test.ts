/**
 * The limits of an answer, through the real app: a uid as long as the protocol
 * allows comes back whole, and however many findings an object has, its
 * warnings stay within the 4,096 characters the apiserver passes on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { baseGateway } from '../support/gateways.js';
import { post, testApp } from '../support/app.js';

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reviews', `${name}.json`), 'utf8'));

/** The apiserver keeps warnings up to 4,096 characters in all and drops the rest. */
const WARNINGS_TOTAL_MAX = 4096;
const WARNING_MAX = 120;

const { app } = testApp();
const warnApp = testApp({ settings: { specPolicy: 'warn' } }).app;
afterAll(async () => {
  await app.close();
  await warnApp.close();
});

describe('the uid', () => {
  // The envelope schema allows 1 to 128 characters.
  const longest = `${'0123456789abcdef'.repeat(8)}`;

  it.each([
    ['validate', 'create-allowed'],
    ['validate', 'create-cluster-outside-range'],
    ['mutate', 'status-defaulting'],
    ['mutate', 'create-allowed'],
  ])('of 128 characters is echoed whole by /%s (%s)', async (webhook, name) => {
    expect(longest).toHaveLength(128);
    const review = fixture(name);
    review.request.uid = longest;
    const res = await post(app, `/${webhook}`, review);
    expect(res.status).toBe(200);
    expect(res.json().response.uid).toBe(longest);
  });

  it('of 129 characters is refused, not cut to fit', async () => {
    const review = fixture('create-allowed');
    review.request.uid = `${longest}x`;
    const res = await post(app, '/validate', review);
    expect(res.status).toBe(400);
    expect(res.json().error).toBe(
      'not an AdmissionReview: request.uid must NOT have more than 128 characters',
    );
  });
});

describe('the warnings budget', () => {
  /** A Gateway whose every address is a spec finding: warnings under --spec-policy warn. */
  function reviewWithFindings(count: number) {
    const review = fixture('create-allowed');
    review.request.object = baseGateway({
      spec: Array.from({ length: count }, (_, i) => ({
        type: 'IPAddress',
        value: `10.0.${i >> 8}.${i & 255}`,
        routability: 'Cluster',
      })),
    });
    return review;
  }

  it('keeps all warnings of a small object', async () => {
    const response = (await post(warnApp, '/validate', reviewWithFindings(3))).json().response;
    expect(response.allowed).toBe(true);
    expect(response.warnings).toHaveLength(3);
    expect(response.warnings.join('\n')).not.toMatch(/not shown/);
  });

  it('stays within 4,096 characters in all, and says how many were left out', async () => {
    const count = 500;
    const response = (await post(warnApp, '/validate', reviewWithFindings(count))).json().response;
    expect(response.allowed).toBe(true);
    const warnings = response.warnings as string[];
    // Far more findings than fit: without a budget this is tens of kilobytes.
    expect(warnings.length).toBeLessThan(count);
    expect(warnings.join('').length).toBeLessThanOrEqual(WARNINGS_TOTAL_MAX);
    for (const w of warnings) expect(w.length).toBeLessThanOrEqual(WARNING_MAX);
    const last = warnings.at(-1) ?? '';
    const left = /^(\d+) more warnings not shown$/.exec(last);
    expect(left, last).not.toBeNull();
    // Every finding is either shown or counted.
    const shown = warnings.length - 1;
    expect(warnings.slice(0, shown).every((w) => w.startsWith('spec.addresses['))).toBe(true);
    expect(shown + Number(left?.[1])).toBeGreaterThanOrEqual(count);
    // The first findings are the ones shown, in order.
    expect(warnings[0]).toMatch(/^spec\.addresses\[0\]/);
    expect(warnings[shown - 1]).toMatch(new RegExp(`^spec\\.addresses\\[${shown - 1}\\]`));
  });
});
