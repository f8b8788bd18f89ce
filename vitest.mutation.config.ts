/**
 * The in-process tests Stryker runs against each mutant (npm run test:mutation).
 * Tests that start the built dist/ in a child process cannot see a mutant in
 * src/, so they are left out: they would only cost time.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/rules/**/*.test.ts',
      'test/http/protocol.test.ts',
      'test/http/golden.test.ts',
      'test/http/body-reader.test.ts',
      'test/http/certificate-watch.test.ts',
      'test/http/json-depth.test.ts',
      'test/http/deep-bodies.test.ts',
      'test/http/log-text.test.ts',
      'test/http/tls-options.test.ts',
      'test/http/health-routes.test.ts',
      'test/admission/**/*.test.ts',
      'src/**/*.test.ts',
    ],
    // Stryker runs the covering tests of each mutant in one worker. Without
    // isolation the worker imports fastify, ajv, prom-client and src/ once per
    // run instead of once per test file: the import was most of each mutant's
    // time (the whole subset: 4-5 s instead of 15-30 s on the shared machine).
    // Mutants are switched at run time, so a shared module cache still sees
    // them; each run starts a fresh worker, so a mutant that only acts while a
    // module loads ("static", MUTATE_STATIC=1) is seen too.
    isolate: false,
    // The same guard as the full suite: no real cluster, no inherited flags.
    setupFiles: ['test/support/isolated-env.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
