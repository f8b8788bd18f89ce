#!/usr/bin/env node
// The closing line of one test-suite run in .ci/run, read from vitest's JSON report:
//   <label>: N passed, N failed, N skipped
// Exits 1 when no test ran, and with --no-skips also when any test was skipped (the run from a
// copy with nothing beside it, where a skip can only mean a test that hides a missing file).
import { readFileSync } from 'node:fs';

const [report, label, ...flags] = process.argv.slice(2);
if (!report || !label) {
  console.error('usage: node scripts/suite-summary.mjs REPORT.json LABEL [--no-skips]');
  process.exit(2);
}
let r;
try {
  r = JSON.parse(readFileSync(report, 'utf8'));
} catch (err) {
  console.error(`${label}: no test report (${err.message.split('\n')[0]})`);
  process.exit(1);
}
const skipped = r.numPendingTests + r.numTodoTests;
console.log(`${label}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
if (r.numTotalTests === 0) {
  console.error('no tests ran');
  process.exit(1);
}
if (flags.includes('--no-skips') && skipped > 0) {
  const names = (r.testResults ?? []).flatMap((file) =>
    (file.assertionResults ?? [])
      .filter((t) => t.status === 'pending' || t.status === 'skipped' || t.status === 'todo')
      .map((t) => `  ${file.name}: ${t.fullName}`),
  );
  console.error(`${skipped} skipped, and this run must skip none:\n${names.join('\n')}`);
  process.exit(1);
}
