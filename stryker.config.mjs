/**
 * Mutation testing (npm run test:mutation): StrykerJS changes src/rules,
 * src/admission and src/http one small edit at a time and runs the in-process
 * tests (vitest.mutation.config.ts) against each; a mutant no test notices is a
 * gap in the tests. Too slow for .ci/run on two cores; docs/testing.md has the
 * scores and times. One folder at a time:
 *   npm run test:mutation -- --mutate 'src/http/**\/*.ts'
 */
import { readdirSync } from 'node:fs';

/**
 * The score below which the command fails, per folder: a little under the
 * score measured when this was last tuned (docs/testing.md), so a change that
 * leaves mutants alive where tests used to kill them fails the run. A run of
 * several folders uses the lowest of their figures.
 */
const BREAK = { 'src/rules': 70, 'src/admission': 85, 'src/http': 20 };
const mutateFlag = process.argv.indexOf('--mutate');
const pattern = mutateFlag >= 0 ? (process.argv[mutateFlag + 1] ?? '') : '';
const folders = Object.keys(BREAK).filter((f) => pattern === '' || pattern.includes(f));
const breakAt = Math.min(...(folders.length > 0 ? folders : Object.keys(BREAK)).map((f) => BREAK[f]));
/**
 * A folder's own tests, where they alone are run against its mutants. The
 * rules engine (2,200 mutants) is also reached through the app (golden and
 * protocol tests) and by the property tests, which run thousands of generated
 * reviews each: with them every mutant took 2-4 s on the shared machine, two
 * hours for the folder. Its score is what the table tests of test/rules kill.
 */
const OWN_TESTS = {
  'src/rules': readdirSync('test/rules')
    .filter((f) => f.endsWith('.test.ts') && f !== 'properties.test.ts')
    .map((f) => `test/rules/${f}`),
};
const ownTests = folders.length === 1 ? OWN_TESTS[folders[0]] : undefined;
// One incremental file per folder run (a run only keeps the results of the
// files it mutated, so a shared file would forget the other folders).
const runName = folders.length === 1 ? folders[0].replace('src/', '') : 'all';

export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
  ...(ownTests ? { testFiles: ownTests } : {}),
  // Static mutants (code that only runs while a module loads, or in a test
  // file's beforeAll) need a fresh module cache and every test per mutant: in
  // src/http 49 of them were estimated at 81% of the run. By default they are
  // reported as "ignored" and left out of the score; MUTATE_STATIC=1 tests them
  // too (the complete score, docs/testing.md).
  ignoreStatic: process.env['MUTATE_STATIC'] !== '1',
  // Reuses the previous run's result for every mutant whose code and covering
  // tests did not change (npm run test:mutation -- --force reruns all).
  incremental: true,
  incrementalFile: `.cache/mutation/incremental-${runName}.json`,
  mutate: ['src/rules/**/*.ts', 'src/admission/**/*.ts', 'src/http/**/*.ts', '!src/**/*.test.ts'],
  // The machine is shared; more runners only make each slower.
  concurrency: 2,
  timeoutMS: 10_000,
  tempDirName: '.cache/stryker-tmp',
  cleanTempDir: 'always',
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: '.cache/mutation/mutation.json' },
  htmlReporter: { fileName: '.cache/mutation/mutation.html' },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: false },
  thresholds: { high: 80, low: 60, break: breakAt },
};
