/**
 * The closing lines of .ci/run (scripts/suite-summary.mjs) and its run from a
 * copy with nothing beside it: a skipped test fails that run.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');
const SCRIPT = join(REPO, 'scripts', 'suite-summary.mjs');
const dir = mkdtempSync(join(tmpdir(), 'suite-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function summary(report: object | undefined, ...flags: string[]) {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  if (report) writeFileSync(path, JSON.stringify(report));
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(process.execPath, [SCRIPT, path, 'node-v20.0.0', ...flags], (err, stdout, stderr) =>
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr }),
    ),
  );
}

const report = (passed: number, failed: number, pending: number) => ({
  numTotalTests: passed + failed + pending,
  numPassedTests: passed,
  numFailedTests: failed,
  numPendingTests: pending,
  numTodoTests: 0,
  testResults: [
    {
      name: '/x/test/a.test.ts',
      assertionResults: [
        ...Array.from({ length: passed }, (_, i) => ({ status: 'passed', fullName: `ok ${i}` })),
        ...Array.from({ length: pending }, (_, i) => ({ status: 'pending', fullName: `hidden ${i}` })),
      ],
    },
  ],
});

describe('scripts/suite-summary.mjs', () => {
  it('prints the closing line and exits 0 on a clean run', async () => {
    const r = await summary(report(12, 0, 0), '--no-skips');
    expect(r).toMatchObject({ code: 0, stdout: 'node-v20.0.0: 12 passed, 0 failed, 0 skipped\n' });
  });

  it('with --no-skips, a skipped test fails the run and is named', async () => {
    const r = await summary(report(12, 0, 1), '--no-skips');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('node-v20.0.0: 12 passed, 0 failed, 1 skipped\n');
    expect(r.stderr).toContain('/x/test/a.test.ts: hidden 0');
  });

  it('without it, skips are counted only', async () => {
    expect((await summary(report(12, 0, 1))).code).toBe(0);
  });

  it('zero tests, or no report at all, fail', async () => {
    const none = await summary(report(0, 0, 0));
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no tests ran');
    const missing = await summary(undefined);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no test report');
  });
});

describe('.ci/run', () => {
  const ci = readFileSync(join(REPO, '.ci', 'run'), 'utf8');

  it('runs the suite once from a git archive copy in a fresh folder, with CI=true and no skips', () => {
    expect(ci).toMatch(/^standalone_parent=\$\(mktemp -d\)$/m);
    expect(ci).toMatch(/^git archive HEAD \| tar -x -C "\$standalone"$/m);
    expect(ci).toMatch(/^ {2}npm ci --no-audit --no-fund \|\| exit 1$/m);
    expect(ci).toMatch(/^ {2}CI=true run_suite machine --no-skips$/m);
    // …and the Node LTS suite in the checkout: two suites in all, not three.
    expect(ci.match(/^\s*(?:\S+=\S+ )*run_suite \w+/gm)).toHaveLength(2);
  });
});
