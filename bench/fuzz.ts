/**
 * `npm run bench -- fuzz`: 100,000 mutated reviews over HTTPS against the built server.
 * Flags: --count N (100000), --seed S (random unless given), --concurrency N (16).
 * Prints the seed first; every failure with (seed, index) to replay it:
 * `fuzzCase(seed, index)` in test/kit/fuzz.ts rebuilds the exact body.
 * Writes bench/results/fuzz-latest.json.
 */
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { keepAliveAgent } from '../test/kit/webhook-client.js';
import { runFuzz } from '../test/kit/fuzz.js';
import { makeCerts, repoRoot, spawnWebhook } from '../test/kit/server-process.js';
import { memoryOf } from '../test/kit/process-stats.js';
import { tempDir } from '../test/kit/key-files.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    seed: { type: 'string' },
    concurrency: { type: 'string', default: '16' },
  },
});
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
const count = Number(values.count);

async function main() {
  console.log(`fuzz: seed ${seed}, ${count} requests, concurrency ${values.concurrency}`);
  const tmp = await tempDir('fuzz-');
  const certs = await makeCerts(join(tmp.path, 'certs'));
  const server = await spawnWebhook({ certs, logFile: join(tmp.path, 'server.log'), logLevel: 'info' });
  const agent = keepAliveAgent(readFileSync(certs.ca, 'utf8'), Number(values.concurrency));
  const started = performance.now();
  try {
    const tally = await runFuzz({
      agent,
      port: server.port,
      seed,
      count,
      concurrency: Number(values.concurrency),
      maxFailures: 50,
      deadlineMs: 30 * 60_000,
      onProgress: (t) =>
        console.log(
          `  ${t.sent} sent, ${JSON.stringify(t.byStatus)}, ${t.failures.length} failures, rss ${memoryOf(server.pid)?.rssMiB.toFixed(1)} MiB`,
        ),
    });
    const seconds = (performance.now() - started) / 1000;
    const alive = server.process.exitCode === null && server.process.signalCode === null;
    const summary = {
      date: new Date().toISOString(),
      seed,
      count,
      sent: tally.sent,
      seconds: Math.round(seconds * 10) / 10,
      byStatus: tally.byStatus,
      answers200: { allowed: tally.allowed, denied: tally.denied, patched: tally.patched },
      failures: tally.failures,
      serverAlive: alive,
      serverPeakRssMiB: memoryOf(server.pid)?.hwmMiB,
    };
    console.log(JSON.stringify({ ...summary, failures: summary.failures.length }, null, 2));
    for (const f of tally.failures.slice(0, 20))
      console.log(
        `FAIL seed ${f.seed} index ${f.index} (HTTP ${f.status}): ${f.reason}\n  ${f.mutations.join('\n  ')}`,
      );
    const dir = join(repoRoot(), 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'fuzz-latest.json'), JSON.stringify(summary, null, 2) + '\n');
    if (tally.failures.length > 0 || !alive || tally.sent !== count) process.exitCode = 1;
  } finally {
    agent.destroy();
    await server.stop();
    await tmp.remove();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
