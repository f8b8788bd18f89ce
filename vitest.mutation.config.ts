/**
 * The in-process tests Stryker runs against each mutant (npm run test:mutation).
 * Tests that start the built dist/ in a child process cannot see a mutant in
 * src/, so they are left out: they would only cost time.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * Stryker runs a mutant's covering test files one after the other and stops at
 * the first failure (bail), so the order decides how long a killed mutant
 * costs. Vitest's own order runs the longest file first (best for a full run
 * on many workers, worst here): test/kube/watch-grace.test.ts (16 s)
 * before the watch tests that kill most src/kube/watch.ts mutants in 1 s,
 * test/policy/params-states.test.ts (17 s of CEL) before the equality tests.
 * This order is: the file that failed in the last run first (the previous
 * mutant was most likely its neighbour in the same code), then the shortest
 * last run first; a file never run yet goes first. The durations are vitest's
 * record of each file's last run (after the dry run: every file, whole), so
 * the order adapts as mutants are tested. Which tests run, and so every
 * result, is unchanged; only the time to the first failure shrinks.
 */
class ShortestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const last = (file: TestSpecification) =>
      this.ctx.cache.getFileTestResults(
        `${file.project.name}:${relative(this.ctx.config.root, file.moduleId)}`,
      );
    const rank = (file: TestSpecification): number => {
      const result = last(file);
      if (result === undefined) return -2;
      return result.failed ? -1 : result.duration;
    };
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: [
      'test/rules/**/*.test.ts',
      'test/http/protocol.test.ts',
      'test/http/golden.test.ts',
      'test/http/admission-routes.test.ts',
      'test/http/app-transport.test.ts',
      'test/http/body-budget.test.ts',
      'test/http/body-bytes.test.ts',
      'test/http/body-gauges.test.ts',
      'test/http/caps.test.ts',
      'test/http/connection-guard.test.ts',
      'test/http/body-reader.test.ts',
      'test/http/parse-json-body.test.ts',
      'test/http/certificate-watch.test.ts',
      'test/http/connection-eviction.test.ts',
      'test/http/json-depth.test.ts',
      'test/http/deep-bodies.test.ts',
      'test/http/log-text.test.ts',
      'test/http/review-log-level.test.ts',
      'test/http/review-record.test.ts',
      'test/http/shutdown-drain.test.ts',
      'test/http/tls-options.test.ts',
      'test/http/health-routes.test.ts',
      'test/http/lookup-requester.test.ts',
      'test/http/error-answers.test.ts',
      'test/http/error-answer.test.ts',
      'test/http/server-metrics.test.ts',
      'test/http/rate-limited-log.test.ts',
      'test/http/review-log.test.ts',
      'test/admission/**/*.test.ts',
      'test/audit/format.test.ts',
      'test/audit/gateway-pages.test.ts',
      'test/config/audit-interval.test.ts',
      'test/audit/judge-allocations.test.ts',
      'test/audit/loop-reports.test.ts',
      'test/audit/loop.test.ts',
      'test/audit/options.test.ts',
      'test/audit/pass.test.ts',
      'test/audit/report-writer.test.ts',
      'test/audit/report-writer-requests.test.ts',
      'test/audit/reports.test.ts',
      'test/audit/server-audit.test.ts',
      'test/kube/**/*.test.ts',
      'test/policy/equality.test.ts',
      'test/policy/generate.test.ts',
      'test/policy/kube-cel.test.ts',
      'test/policy/params-states.test.ts',
      'test/policy/chart-form.test.ts',
      'test/policy/docs-examples.test.ts',
      'test/policy/manifest.test.ts',
      'test/policy/cel.test.ts',
      'test/policy/rule-messages.test.ts',
      'test/inputs/**/*.test.ts',
      'test/server/**/*.test.ts',
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
    // serve end to end: these start the built dist/ in a child process.
    exclude: [
      'test/server/serve-e2e.test.ts',
      'test/server/serve-revision-e2e.test.ts',
      'test/server/serve-dev-kubeconfig.test.ts',
    ],
    // The same guard as the full suite: no real cluster, no inherited flags.
    setupFiles: ['test/kit/isolated-env.ts'],
    sequence: { sequencer: ShortestFirst },
    // Stryker's dry run is instrumented and one runner shares two cores with everything else
    // (load 20+): test/policy/equality.test.ts's first test, 1.7 s on a quiet machine, passed 30 s.
    // A mutant's own time limit is Stryker's (timeoutMS, from the dry run), not this.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
