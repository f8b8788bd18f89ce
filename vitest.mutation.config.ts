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
      'test/admission/**/*.test.ts',
      'src/**/*.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
