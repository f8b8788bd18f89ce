import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Server, chart and CLI tests spawn processes and open sockets; on a 2-core
    // machine a generous timeout avoids flakes without hiding real hangs.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Builds dist/ when it is older than src/ (tests run the built CLI).
    globalSetup: ['test/support/fresh-dist.ts'],
    // An empty HOME per file, no KUBECONFIG, no ROUTABILITY_WEBHOOK_* from the shell.
    setupFiles: ['test/support/isolated-env.ts'],
  },
});
