/**
 * Every fixture review through the real app (inject), under both webhooks,
 * against a golden response. `npm run goldens:update` rewrites the goldens (review
 * the diff before committing); a test run never writes one, and a missing golden fails.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { post, testApp } from '../kit/app.js';

const folder = join(import.meta.dirname, '..', 'fixtures', 'reviews');
const fixtures = readdirSync(folder).filter((f) => f.endsWith('.json'));
const { app } = testApp();
afterAll(() => app.close());

describe('fixture reviews match their golden responses', () => {
  it('there are fixtures to check', () => expect(fixtures.length).toBeGreaterThanOrEqual(15));

  for (const file of fixtures) {
    for (const webhook of ['validate', 'mutate'] as const) {
      it(`${file} via /${webhook}`, async () => {
        const review = JSON.parse(readFileSync(join(folder, file), 'utf8'));
        const res = await post(app, `/${webhook}`, review);
        expect(res.status).toBe(200);
        const body = res.json();
        const golden = join(folder, 'golden', `${file.replace(/\.json$/, '')}.${webhook}.json`);
        if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(golden, JSON.stringify(body, null, 2) + '\n');
        else if (!existsSync(golden))
          throw new Error(`golden ${golden} is missing: write it with npm run goldens:update and review it`);
        expect(body).toEqual(JSON.parse(readFileSync(golden, 'utf8')));
      });
    }
  }
});
