import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Server, chart and CLI tests spawn processes and open sockets; on a 2-core
    // machine a generous timeout avoids flakes without hiding real hangs.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: one on a 2-core machine, where the
    // suite then runs file after file while the API-fault, watch-fault and hostile-client files
    // spend most of their two minutes waiting on timers. Two workers overlap that waiting
    // (measured at load 16-20 on 2 cores: 12 min 39 s with one worker, 10 min 18 s with two,
    // 1,577 passed both times); the timing tests already tolerate a loaded machine.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Builds dist/ when it is older than src/ (tests run the built CLI).
    globalSetup: ['test/kit/fresh-dist.ts'],
    // An empty HOME per file, no KUBECONFIG, no ROUTABILITY_WEBHOOK_* from the shell.
    setupFiles: ['test/kit/isolated-env.ts'],
  },
});
