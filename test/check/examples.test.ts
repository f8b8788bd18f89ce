/**
 * The upstream Gateway API v1.6.1 examples and conformance manifests are all
 * valid Gateways (upstream ships them as valid): check must accept every one, including the conformance
 * Gateways with `test/fake-invalid-type` addresses and value-less entries.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GATEWAY_API_EXAMPLES as EXAMPLES } from '../kit/upstream-fixtures.js';
import { check, RANGES } from './support.js';

describe('check over the upstream Gateway API v1.6.1 examples', () => {
  it('exits 0 with no findings and says how many Gateways it checked', async () => {
    const r = await check(['-f', EXAMPLES, ...RANGES, '-o', 'json']);
    const report = JSON.parse(r.stdout);
    console.info(
      `upstream examples: checked ${report.summary.gateways} Gateways in ${report.summary.files} files, skipped ${report.summary.skippedDocuments} other documents`,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(report.summary).toMatchObject({ violations: 0, warnings: 0, inputErrors: 0 });
    expect(report.summary.files).toBe(99);
    expect(report.summary.gateways).toBeGreaterThanOrEqual(99);
    const text = await check(['-f', EXAMPLES, ...RANGES]);
    expect(text.stdout).toMatch(/^checked \d+ Gateways in 99 files: 0 violations, 0 warnings/);
  });

  it('includes the conformance Gateway with test/fake-invalid-type and value-less addresses', async () => {
    const file = join(EXAMPLES, 'conformance', 'tests', 'gateway-static-addresses.yaml');
    const r = await check(['-f', file, ...RANGES, '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).summary.gateways).toBeGreaterThanOrEqual(1);
  });
});
