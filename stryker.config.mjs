/**
 * Mutation testing (npm run test:mutation): StrykerJS changes src/rules,
 * src/admission and src/http one small edit at a time and runs the in-process
 * tests (vitest.mutation.config.ts) against each; a mutant no test notices is a
 * gap in the tests. Too slow for .ci/run on two cores; docs/testing.md has the
 * scores and times. One folder at a time:
 *   npm run test:mutation -- --mutate 'src/http/**\/*.ts'
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
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
  // The command fails below `break`; docs/testing.md explains the figure.
  thresholds: { high: 85, low: 70, break: 70 },
};
