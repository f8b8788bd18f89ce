/**
 * The limits of an answer, through the real app: a uid as long as the protocol
 * allows comes back whole, and however many findings an object has, its
 * warnings stay within the 4,096 characters the apiserver passes on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { baseGateway } from '../kit/gateways.js';
import { post, testApp } from '../kit/app.js';

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reviews', `${name}.json`), 'utf8'));

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

describe('warnings', () => {
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
    for (const w of response.warnings) expect(w.length).toBeLessThanOrEqual(WARNING_MAX);
  });
});
