/**
 * Every output format over the fixture folder (valid and invalid Gateways,
 * other kinds, Lists, JSON, v1beta1, status, broken YAML, empty and non-object
 * documents), compared byte for byte with test/fixtures/check/golden/.
 * `npm run goldens:update` rewrites them.
 */
import { describe, expect, it } from 'vitest';
import { check, expectGolden, RANGES } from './support.js';

const FORMATS = [
  { output: 'text', golden: 'folder.txt' },
  { output: 'json', golden: 'folder.json' },
  { output: 'github', golden: 'folder.github.txt' },
  { output: 'junit', golden: 'folder.junit.xml' },
] as const;

const STDERR_INPUT_ERRORS = [
  'manifests/broken.yaml:24:6: error: invalid YAML: Sequence item without - indicator',
  'manifests/list.yaml:33:5: error: items[3] of document 1 is a string, not a Kubernetes object',
  'manifests/not-an-object.yaml:2:1: error: document 1 is a string, not a Kubernetes object',
  'manifests/not-an-object.yaml:4:1: error: document 2 is a sequence, not a Kubernetes object',
];

describe('check over the fixture folder', () => {
  for (const { output, golden } of FORMATS) {
    it(`--output ${output} matches golden/${golden} and exits 2 (broken input wins over violations)`, async () => {
      const r = await check(['-f', 'manifests', ...RANGES, '--output', output]);
      expectGolden(golden, r.stdout);
      expect(r.code).toBe(2);
      // Text carries input errors in the report; machine formats keep stdout parseable and echo them on stderr.
      expect(r.stderr).toBe(output === 'text' ? '' : STDERR_INPUT_ERRORS.join('\n') + '\n');
    });
  }

  it('the JSON report parses and its summary agrees with its contents', async () => {
    const r = await check(['-f', 'manifests', ...RANGES, '-o', 'json']);
    const report = JSON.parse(r.stdout);
    expect(report.version).toBe(1);
    const gateways = report.files.flatMap((f: { gateways: unknown[] }) => f.gateways);
    const findings = gateways.flatMap((g: { findings: { severity: string }[] }) => g.findings);
    expect(report.summary).toMatchObject({
      files: 10,
      gateways: gateways.length,
      violations: findings.filter((f: { severity: string }) => f.severity === 'violation').length,
      warnings: findings.filter((f: { severity: string }) => f.severity === 'warning').length,
      inputErrors: 4,
      exitCode: 2,
    });
    expect(gateways.map((g: { apiVersion: string }) => g.apiVersion)).toContain(
      'gateway.networking.k8s.io/v1beta1',
    );
  });
});
