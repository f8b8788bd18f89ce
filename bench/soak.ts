/**
 * `npm run bench -- soak`: 60 s at about half the measured maximum throughput, the
 * three payloads mixed, in six 10 s windows. Zero errors; RSS growth after the
 * first (warm-up) window under 20 MiB; p99 per window reported (stable = the
 * last windows within 2× the second's). Writes bench/results/soak-latest.json.
 * Flags: --seconds N (60), --rate R (req/s; default half of a 5 s max run), --connections N (32).
 */
import autocannon from 'autocannon';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { makeCerts, repoRoot, spawnWebhook } from '../test/kit/server-process.js';
import { memoryOf, sampleMemory } from '../test/kit/process-stats.js';
import { tempDir } from '../test/kit/key-files.js';
import { benchPayloads } from '../test/kit/payloads.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    rate: { type: 'string' },
    connections: { type: 'string', default: '32' },
  },
});
const WINDOW_S = 10;

async function main() {
  const tmp = await tempDir('soak-');
  const certs = await makeCerts(join(tmp.path, 'certs'));
  const ca = readFileSync(certs.ca, 'utf8');
  const server = await spawnWebhook({ certs, logFile: join(tmp.path, 'server.log') });
  const payloads = benchPayloads();
  const base = {
    url: `https://127.0.0.1:${server.port}`,
    connections: Number(values.connections),
    servername: 'localhost',
    tlsOptions: { ca },
    timeout: 10,
    requests: payloads.map((p) => ({
      method: 'POST',
      path: `${p.path}?timeout=10s`,
      headers: { 'content-type': 'application/json' },
      body: p.body,
    })),
  };
  try {
    let rate = values.rate ? Number(values.rate) : 0;
    let maxRps = NaN;
    if (!rate) {
      const max = await autocannon({ ...base, duration: 5 });
      maxRps = max.requests.total! / max.duration;
      rate = Math.round(maxRps / 2);
      console.log(`max (mixed payloads, 5 s): ${Math.round(maxRps)} req/s → soak at ${rate} req/s`);
    }
    const windows = Math.max(1, Math.round(Number(values.seconds) / WINDOW_S));
    const rows: {
      window: number;
      rps: number;
      p50: number;
      p99: number;
      max: number;
      errors: number;
      non2xx: number;
      timeouts: number;
      rssEndMiB: number;
      rssMaxMiB: number;
    }[] = [];
    for (let w = 1; w <= windows; w++) {
      const memory = sampleMemory(server.pid, 500);
      const r = await autocannon({ ...base, duration: WINDOW_S, overallRate: rate });
      const rss = memory.stop();
      const row = {
        window: w,
        rps: Math.round(r.requests.total! / r.duration),
        p50: r.latency.p50,
        p99: r.latency.p99,
        max: r.latency.max,
        errors: r.errors,
        non2xx: r.non2xx,
        timeouts: r.timeouts,
        rssEndMiB: Math.round(rss[rss.length - 1]! * 10) / 10,
        rssMaxMiB: Math.round(Math.max(...rss) * 10) / 10,
      };
      rows.push(row);
      console.log(
        `  window ${w} (${(w - 1) * WINDOW_S}–${w * WINDOW_S} s): ${row.rps} req/s p50 ${row.p50} ms p99 ${row.p99} ms max ${row.max} ms, errors ${row.errors} non2xx ${row.non2xx} timeouts ${row.timeouts}, RSS ${row.rssEndMiB} MiB (max ${row.rssMaxMiB})`,
      );
    }
    const warm = rows[0]!.rssEndMiB;
    const growth = Math.round((Math.max(...rows.slice(1).map((r) => r.rssMaxMiB), warm) - warm) * 10) / 10;
    const errors = rows.reduce((s, r) => s + r.errors + r.non2xx + r.timeouts, 0);
    const steady = rows.slice(1);
    const p99s = steady.map((r) => r.p99);
    const p99Stable = steady.length < 2 || Math.max(...p99s) <= 2 * Math.max(1, Math.min(...p99s));
    const summary = {
      date: new Date().toISOString(),
      seconds: windows * WINDOW_S,
      rate,
      measuredMaxRps: Math.round(maxRps),
      windows: rows,
      errors,
      rssAfterWarmupMiB: warm,
      rssGrowthMiB: growth,
      peakRssMiB: memoryOf(server.pid)?.hwmMiB,
      p99Stable,
      pass: errors === 0 && growth < 20 && p99Stable,
    };
    console.log(
      `errors ${errors}; RSS after warm-up ${warm} MiB, growth ${growth} MiB (target < 20); p99 per window ${rows.map((r) => r.p99).join(', ')} ms (${p99Stable ? 'stable' : 'NOT stable'}); ${summary.pass ? 'PASS' : 'FAIL'}`,
    );
    const dir = join(repoRoot(), 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'soak-latest.json'), JSON.stringify(summary, null, 2) + '\n');
    if (!summary.pass) process.exitCode = 1;
  } finally {
    await server.stop();
    await tmp.remove();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
