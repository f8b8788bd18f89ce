/**
 * `npm run bench`: the built webhook against a minimal baseline server, over
 * HTTPS keep-alive (HTTP/1.1) with autocannon at 32 connections, alternating
 * A B A B per payload; plus engine cost and readiness time. Writes
 * bench/results/latest.json and bench/results/benchmarks-chart.svg (docs/benchmarks-chart.svg only
 * with --update-docs-chart, when the run's figures go into docs/benchmarks.md).
 *
 * Flags: --duration S (per round, default 5), --rounds N (default 3),
 * --connections N (32), --payloads a,b, --cpu-prof (profile the webhook into
 * bench/results/), --no-chart, --log-level L (webhook, default info), --node-args "…" (extra
 * Node flags for the webhook, e.g. --max-semi-space-size=4), --readiness-runs N (5).
 */
import autocannon, { type Result } from 'autocannon';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderChart } from './lib/chart.js';
import { measureEngine, type EngineFigure } from './lib/engine.js';
import {
  CLI,
  cpuMsOf,
  makeCerts,
  memoryOf,
  repoRoot,
  sampleMemory,
  spawnBaseline,
  spawnWebhook,
  tempDir,
  waitReady,
  type Child,
} from './lib/servers.js';
import { keepAliveAgent, post } from './lib/client.js';
import { benchPayloads, type BenchPayload } from './payloads.js';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    payloads: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'no-chart': { type: 'boolean', default: false },
    'update-docs-chart': { type: 'boolean', default: false },
    'log-level': { type: 'string', default: 'info' },
    'readiness-runs': { type: 'string', default: '5' },
    'node-args': { type: 'string', default: '' },
  },
});
const DURATION = Number(flags.duration);
const ROUNDS = Math.max(1, Number(flags.rounds));
const CONNECTIONS = Number(flags.connections);

const TARGETS = { throughputRatio: 0.85, p99Ratio: 1.5, engineRatio: 0.25, readyMs: 1000, rssMiB: 120 };

interface RunFigure {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly requests: number;
  readonly errors: number;
  readonly non2xx: number;
  readonly mismatches: number;
  readonly timeouts: number;
  readonly peakRssMiB: number;
  /** Server CPU (user + system) per answered request, µs, measured from /proc. */
  readonly cpuUsPerRequest: number;
}

interface Round {
  readonly round: number;
  readonly webhook: RunFigure;
  readonly baseline: RunFigure;
  readonly ratio: number;
  readonly p99Ratio: number;
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const round2 = (x: number) => Math.round(x * 100) / 100;

function machine() {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  let nproc = cpus().length;
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    // keep os.cpus()
  }
  return {
    nproc,
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    memTotalMiB: Math.round(
      Number(/^MemTotal:\s+(\d+)/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) / 1024,
    ),
    loadAvgAtStart: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  };
}

/** One autocannon run against `child`; the expected body makes every wrong answer a mismatch. */
async function load(child: Child, p: BenchPayload, ca: string, expectBody: string): Promise<RunFigure> {
  const memory = sampleMemory(child.pid, 200);
  const cpuAtStart = cpuMsOf(child.pid);
  const result: Result = await autocannon({
    url: `https://127.0.0.1:${child.port}${p.path}?timeout=10s`,
    method: 'POST',
    body: p.body,
    headers: { 'content-type': 'application/json' },
    connections: CONNECTIONS,
    pipelining: 1,
    duration: DURATION,
    timeout: 10,
    servername: 'localhost',
    tlsOptions: { ca },
    expectBody,
    warmup: { duration: 1, connections: CONNECTIONS },
  });
  const rss = memory.stop();
  const cpuMs = cpuMsOf(child.pid) - cpuAtStart;
  const answered = (result.requests.total ?? 0) + (result.warmup?.requests.total ?? 0);
  return {
    rps:
      result.requests.total !== undefined ? result.requests.total / result.duration : result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total ?? 0,
    errors: result.errors,
    non2xx: result.non2xx,
    mismatches: result.mismatches,
    timeouts: result.timeouts,
    peakRssMiB: round2(Math.max(...rss)),
    cpuUsPerRequest: Math.round((cpuMs * 1000) / Math.max(1, answered)),
  };
}

async function readiness(
  certs: { cert: string; key: string },
  logDir: string,
  runs: number,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const child = await spawnWebhook({ certs, logFile: join(logDir, `ready-${i}.log`) });
    try {
      out.push(round2(await waitReady(child.healthPort!, child.spawnedAt, 10_000)));
    } finally {
      await child.stop();
    }
  }
  return out;
}

async function main() {
  const root = repoRoot();
  if (!existsSync(CLI())) throw new Error('dist/cli/main.js is missing: run `npm run build` first');
  const here = dirname(fileURLToPath(import.meta.url));
  const baselineScript = join(here, 'baseline-server.js');
  const resultsDir = join(root, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const tmp = await tempDir('bench-');
  const info = machine();
  console.log(
    `machine: ${info.nproc} CPUs, ${info.cpuModel}, node ${info.node}, load ${info.loadAvgAtStart}`,
  );

  const selected = flags.payloads?.split(',');
  const payloads = benchPayloads().filter((p) => !selected || selected.includes(p.name));
  let webhook: Child | undefined;
  let baseline: Child | undefined;
  try {
    const certs = await makeCerts(join(tmp.path, 'certs'));
    const ca = readFileSync(certs.ca, 'utf8');

    console.log('\nengine cost (in-process, built code)…');
    const engine: EngineFigure[] = await measureEngine(payloads);
    for (const e of engine)
      console.log(
        `  ${e.payload.padEnd(14)} ${String(e.bytes).padStart(6)} B  JSON.parse ${(e.parseNs / 1e3).toFixed(1)} µs  rules ${(e.rulesNs / 1e3).toFixed(1)} µs  ratio ${e.ratio.toFixed(3)}  (decode+rules+encode+parse+stringify ${(e.pipelineNs / 1e3).toFixed(1)} µs)`,
      );

    console.log('\nreadiness (spawn → /readyz 200)…');
    const readyMs = await readiness(certs, tmp.path, Number(flags['readiness-runs']));
    console.log(`  ${readyMs.join(' ms, ')} ms`);

    const profDir = join(resultsDir, 'profiles');
    webhook = await spawnWebhook({
      certs,
      logFile: join(tmp.path, 'webhook.log'),
      logLevel: flags['log-level'],
      nodeArgs: [
        ...(flags['node-args'] ? flags['node-args'].split(' ') : []),
        ...(flags['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', join(profDir, 'webhook')] : []),
      ],
    });
    baseline = await spawnBaseline({
      certs,
      logFile: join(tmp.path, 'baseline.log'),
      script: baselineScript,
      nodeArgs: flags['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', join(profDir, 'baseline')] : [],
    });

    const agent = keepAliveAgent(ca, 1);
    const results: {
      payload: string;
      path: string;
      bytes: number;
      description: string;
      rounds: Round[];
    }[] = [];
    for (const p of payloads) {
      // The exact answers (the uid is fixed), so autocannon counts any other body as a mismatch.
      const expectWebhook = (
        await post({ agent, port: webhook.port, path: `${p.path}?timeout=10s`, body: p.body })
      ).body;
      const expectBaseline = (
        await post({ agent, port: baseline.port, path: `${p.path}?timeout=10s`, body: p.body })
      ).body;
      console.log(`\n${p.name} (${p.body.length} B → ${p.path}): ${p.description}`);
      const rounds: Round[] = [];
      for (let r = 1; r <= ROUNDS; r++) {
        const a = await load(webhook, p, ca, expectWebhook);
        const b = await load(baseline, p, ca, expectBaseline);
        const round: Round = {
          round: r,
          webhook: a,
          baseline: b,
          ratio: round2(a.rps / b.rps),
          p99Ratio: round2(a.p99 / b.p99),
        };
        rounds.push(round);
        console.log(
          `  round ${r}: webhook ${a.rps.toFixed(0)} req/s p50 ${a.p50} ms p99 ${a.p99} ms rss ${a.peakRssMiB} MiB cpu ${a.cpuUsPerRequest} µs/req` +
            ` | baseline ${b.rps.toFixed(0)} req/s p50 ${b.p50} ms p99 ${b.p99} ms rss ${b.peakRssMiB} MiB cpu ${b.cpuUsPerRequest} µs/req` +
            ` | ratio ${round.ratio}` +
            (a.errors + a.non2xx + a.mismatches + a.timeouts > 0
              ? ` | WEBHOOK errors ${a.errors} non2xx ${a.non2xx} mismatches ${a.mismatches} timeouts ${a.timeouts}`
              : ''),
        );
      }
      results.push({
        payload: p.name,
        path: p.path,
        bytes: p.body.length,
        description: p.description,
        rounds,
      });
    }
    agent.destroy();

    const webhookHwm = memoryOf(webhook.pid)?.hwmMiB ?? NaN;
    const baselineHwm = memoryOf(baseline.pid)?.hwmMiB ?? NaN;
    const summary = results.map((r) => {
      const w = r.rounds.map((x) => x.webhook);
      const b = r.rounds.map((x) => x.baseline);
      return {
        payload: r.payload,
        bytes: r.bytes,
        ratios: r.rounds.map((x) => x.ratio),
        medianRatio: round2(median(r.rounds.map((x) => x.ratio))),
        webhook: {
          rps: Math.round(median(w.map((x) => x.rps))),
          p50: median(w.map((x) => x.p50)),
          p99: median(w.map((x) => x.p99)),
          peakRssMiB: Math.max(...w.map((x) => x.peakRssMiB)),
          cpuUsPerRequest: median(w.map((x) => x.cpuUsPerRequest)),
          failures: w.reduce((s, x) => s + x.errors + x.non2xx + x.mismatches + x.timeouts, 0),
        },
        baseline: {
          rps: Math.round(median(b.map((x) => x.rps))),
          p50: median(b.map((x) => x.p50)),
          p99: median(b.map((x) => x.p99)),
          peakRssMiB: Math.max(...b.map((x) => x.peakRssMiB)),
          cpuUsPerRequest: median(b.map((x) => x.cpuUsPerRequest)),
          failures: b.reduce((s, x) => s + x.errors + x.non2xx + x.mismatches + x.timeouts, 0),
        },
        medianP99Ratio: round2(median(r.rounds.map((x) => x.p99Ratio))),
      };
    });

    const checks = [
      ...summary.map((s) => ({
        target: `throughput ratio ≥ ${TARGETS.throughputRatio} (${s.payload})`,
        value: s.medianRatio,
        ok: s.medianRatio >= TARGETS.throughputRatio,
      })),
      ...summary.map((s) => ({
        target: `p99 ≤ ${TARGETS.p99Ratio}× baseline (${s.payload})`,
        value: s.medianP99Ratio,
        ok: s.medianP99Ratio <= TARGETS.p99Ratio,
      })),
      ...engine.map((e) => ({
        target: `rules ≤ ${TARGETS.engineRatio} × JSON.parse (${e.payload})`,
        value: Math.round(e.ratio * 1000) / 1000,
        ok: e.ratio <= TARGETS.engineRatio,
      })),
      {
        target: `ready ≤ ${TARGETS.readyMs} ms (max of runs)`,
        value: Math.max(...readyMs),
        ok: Math.max(...readyMs) <= TARGETS.readyMs,
      },
      {
        target: `webhook RSS ≤ ${TARGETS.rssMiB} MiB (VmHWM)`,
        value: round2(webhookHwm),
        ok: webhookHwm <= TARGETS.rssMiB,
      },
      ...summary.map((s) => ({
        target: `zero failed requests (${s.payload})`,
        value: s.webhook.failures,
        ok: s.webhook.failures === 0,
      })),
    ];

    console.log('\nsummary (medians over rounds):');
    console.log(
      '| payload | bytes | webhook req/s | baseline req/s | ratios per round | median ratio | webhook p50/p99 ms | baseline p50/p99 ms |',
    );
    console.log('|---|---:|---:|---:|---|---:|---:|---:|');
    for (const s of summary)
      console.log(
        `| ${s.payload} | ${s.bytes} | ${s.webhook.rps} | ${s.baseline.rps} | ${s.ratios.join(', ')} | ${s.medianRatio} | ${s.webhook.p50} / ${s.webhook.p99} | ${s.baseline.p50} / ${s.baseline.p99} |`,
      );
    console.log(`peak RSS (VmHWM): webhook ${round2(webhookHwm)} MiB, baseline ${round2(baselineHwm)} MiB`);
    console.log('\ntargets:');
    for (const c of checks) console.log(`  ${c.ok ? 'PASS' : 'MISS'}  ${c.target}: ${c.value}`);

    const out = {
      date: new Date().toISOString(),
      machine: {
        ...info,
        loadAvgAtEnd: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
      },
      settings: {
        durationSeconds: DURATION,
        warmupSeconds: 1,
        rounds: ROUNDS,
        connections: CONNECTIONS,
        logLevel: flags['log-level'],
      },
      engine,
      readyMs,
      memory: { webhookHwmMiB: round2(webhookHwm), baselineHwmMiB: round2(baselineHwm) },
      results,
      summary,
      checks,
    };
    writeFileSync(join(resultsDir, 'latest.json'), JSON.stringify(out, null, 2) + '\n');
    console.log(`\nwrote ${join(resultsDir, 'latest.json')}`);
    if (!flags['no-chart'] && summary.length > 0) {
      const svg = renderChart(
        summary.map((s) => ({
          label: s.payload,
          webhook: s.webhook.rps,
          baseline: s.baseline.rps,
          ratio: s.medianRatio,
        })),
        `${CONNECTIONS} keep-alive HTTPS connections, ${ROUNDS} rounds × ${DURATION} s, ${info.nproc} CPUs (${info.cpuModel}), node ${info.node}, ${out.date.slice(0, 10)}`,
      );
      // The tracked chart shows the figures of docs/benchmarks.md: only replaced when asked.
      const chartFile = flags['update-docs-chart']
        ? join(root, 'docs', 'benchmarks-chart.svg')
        : join(resultsDir, 'benchmarks-chart.svg');
      writeFileSync(chartFile, svg);
      console.log(`wrote ${chartFile}`);
    }
  } finally {
    await Promise.allSettled([webhook?.stop(), baseline?.stop()]);
    await tmp.remove();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
