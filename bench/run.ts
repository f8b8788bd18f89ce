/**
 * `npm run bench`: the built webhook against two baselines, over HTTPS
 * keep-alive (HTTP/1.1) with autocannon at 32 connections: bare Fastify with
 * the project's transport options and body reader (bench/fastify-server.ts),
 * and raw `node:https` (bench/baseline-server.ts), both answering a fixed,
 * correct review. Per payload the three alternate in rounds (the order
 * rotates every round), and each round's ratios are taken within the round.
 * Then latency at 1 and 4 connections (bench/lib/latency.ts), engine cost and
 * readiness time. Writes bench/results/latest.json and
 * bench/results/benchmarks-chart.svg (docs/benchmarks-chart.svg only with
 * --update-docs-chart, when the run's figures go into docs/benchmarks.md).
 *
 * Flags: --duration S (per server and round, default 5), --rounds N (3),
 * --connections N (32), --payloads a,b, --servers webhook,fastify,node,
 * --latency-connections 1,4 (empty: skip), --latency-duration S (3),
 * --max-load L (a round that ends with the 1-minute load average above L is
 * run again, at most --retries N times; default L = 2 × CPUs, N = 2),
 * --variant NAME=PATH (repeatable: another build's dist/cli/main.js, run as one
 * more webhook in the same rounds, to measure a change against the current
 * build), --cpu-prof (profiles into bench/results/profiles/), --no-chart,
 * --log-level L (webhook, default info), --node-args "…" (extra Node flags for
 * the webhook), --readiness-runs N (5), --no-engine.
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
import { measureLatency, type LatencyFigure } from './lib/latency.js';
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
    servers: { type: 'string', default: 'webhook,fastify,node' },
    'latency-connections': { type: 'string', default: '1,4' },
    'latency-duration': { type: 'string', default: '3' },
    'max-load': { type: 'string' },
    retries: { type: 'string', default: '2' },
    'cpu-prof': { type: 'boolean', default: false },
    'no-chart': { type: 'boolean', default: false },
    'no-engine': { type: 'boolean', default: false },
    'update-docs-chart': { type: 'boolean', default: false },
    'log-level': { type: 'string', default: 'info' },
    'readiness-runs': { type: 'string', default: '5' },
    'node-args': { type: 'string', default: '' },
    variant: { type: 'string', multiple: true, default: [] },
  },
});
const DURATION = Number(flags.duration);
const ROUNDS = Math.max(1, Number(flags.rounds));
const CONNECTIONS = Number(flags.connections);
const RETRIES = Math.max(0, Number(flags.retries));
const LATENCY_CONNECTIONS = (flags['latency-connections'] ?? '').split(',').filter(Boolean).map(Number);
const LATENCY_MS = Number(flags['latency-duration']) * 1000;

/** Other webhook builds (--variant NAME=PATH), measured in the same rounds. */
const VARIANTS = new Map(
  (flags.variant ?? []).map((v) => {
    const at = v.indexOf('=');
    if (at < 1) throw new Error(`--variant ${v}: expected NAME=PATH`);
    return [v.slice(0, at), v.slice(at + 1)] as const;
  }),
);
/** The servers, in the order of the first round. */
const SERVERS = ['webhook', ...VARIANTS.keys(), 'fastify', 'node'];
type ServerName = string;
const selectedServers = new Set([...flags.servers.split(','), ...VARIANTS.keys()]);
const LABEL: Record<ServerName, string> = {
  webhook: 'webhook',
  fastify: 'bare Fastify',
  node: 'raw node',
};
const label = (s: ServerName) => LABEL[s] ?? s;

const TARGETS = {
  /** Issue 15: the webhook at least 0.8 of raw node.js, and within 10 % of bare Fastify. */
  vsNode: 0.8,
  vsFastify: 0.9,
  p99VsNode: 1.5,
  engineRatio: 0.25,
  readyMs: 1000,
  rssMiB: 120,
};

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
  /** Server CPU (user + system, all threads: what process.cpuUsage() reports) per answered request, µs. */
  readonly cpuUsPerRequest: number;
  /** 1-minute load average when the run ended. */
  readonly load: number;
}

type Trio<T> = Partial<Record<ServerName, T>>;

interface Round {
  readonly round: number;
  readonly order: ServerName[];
  readonly figures: Trio<RunFigure>;
  /** Throughput ratios within the round. */
  readonly webhookVsNode?: number;
  readonly webhookVsFastify?: number;
  readonly fastifyVsNode?: number;
  readonly p99VsNode?: number;
  /**
   * CPU per review, raw node's over the webhook's and bare Fastify's over the webhook's: the
   * throughput ratios a server with a core of its own would reach, less disturbed by other
   * work on a shared machine than requests per second.
   */
  readonly cpuWebhookVsNode?: number;
  readonly cpuWebhookVsFastify?: number;
  /** Each --variant's ratios within the round. */
  readonly variants: Record<
    string,
    { vsNode?: number; vsFastify?: number; cpuVsNode?: number; cpuVsFastify?: number }
  >;
  /** Highest 1-minute load average seen during the round. */
  readonly load: number;
  /** Runs of this round discarded for load above --max-load. */
  readonly discarded: number;
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const round2 = (x: number) => Math.round(x * 100) / 100;
const loadNow = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

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
    load: loadNow(),
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

const rotate = <T>(xs: readonly T[], by: number): T[] => xs.map((_, i) => xs[(i + by) % xs.length]!);
const ratio = (a: RunFigure | undefined, b: RunFigure | undefined) =>
  a && b ? round2(a.rps / b.rps) : undefined;
/** b's CPU per review over a's: the throughput ratio a/b if CPU were the only limit. */
const cpuRatio = (a: RunFigure | undefined, b: RunFigure | undefined) =>
  a && b ? round2(b.cpuUsPerRequest / a.cpuUsPerRequest) : undefined;

function describeRun(name: ServerName, f: RunFigure): string {
  const failures = f.errors + f.non2xx + f.mismatches + f.timeouts;
  return (
    `${label(name)} ${f.rps.toFixed(0)} req/s p50 ${f.p50} p99 ${f.p99} ms cpu ${f.cpuUsPerRequest} µs` +
    (failures > 0
      ? ` FAILED errors ${f.errors} non2xx ${f.non2xx} mismatches ${f.mismatches} timeouts ${f.timeouts}`
      : '')
  );
}

interface LatencyRow {
  readonly payload: string;
  readonly connections: number;
  readonly rounds: { figures: Trio<LatencyFigure>; load: number }[];
}

async function main() {
  const root = repoRoot();
  if (!existsSync(CLI())) throw new Error('dist/cli/main.js is missing: run `npm run build` first');
  const here = dirname(fileURLToPath(import.meta.url));
  const resultsDir = join(root, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const tmp = await tempDir('bench-');
  const info = machine();
  const maxLoad = flags['max-load'] !== undefined ? Number(flags['max-load']) : 2 * info.nproc;
  console.log(
    `machine: ${info.nproc} CPUs, ${info.cpuModel}, node ${info.node}, load ${info.loadAvgAtStart}`,
  );

  const selected = flags.payloads?.split(',');
  const payloads = benchPayloads().filter((p) => !selected || selected.includes(p.name));
  const servers: Trio<Child> = {};
  try {
    const certs = await makeCerts(join(tmp.path, 'certs'));
    const ca = readFileSync(certs.ca, 'utf8');

    const engine: EngineFigure[] = flags['no-engine'] ? [] : await measureEngine(payloads);
    if (engine.length > 0) console.log('\nengine cost (in-process, built code)…');
    for (const e of engine)
      console.log(
        `  ${e.payload.padEnd(14)} ${String(e.bytes).padStart(6)} B  JSON.parse ${(e.parseNs / 1e3).toFixed(1)} µs  rules ${(e.rulesNs / 1e3).toFixed(1)} µs  ratio ${e.ratio.toFixed(3)}  (decode+rules+encode+parse+stringify ${(e.pipelineNs / 1e3).toFixed(1)} µs)`,
      );

    const readyRuns = Number(flags['readiness-runs']);
    const readyMs = readyRuns > 0 ? await readiness(certs, tmp.path, readyRuns) : [];
    if (readyMs.length > 0) console.log(`\nreadiness (spawn → /readyz 200): ${readyMs.join(' ms, ')} ms`);

    const profDir = join(resultsDir, 'profiles');
    const prof = (name: string) =>
      flags['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', join(profDir, name)] : [];
    if (selectedServers.has('webhook'))
      servers.webhook = await spawnWebhook({
        certs,
        logFile: join(tmp.path, 'webhook.log'),
        logLevel: flags['log-level'],
        nodeArgs: [...(flags['node-args'] ? flags['node-args'].split(' ') : []), ...prof('webhook')],
      });
    for (const [name, cli] of VARIANTS)
      servers[name] = await spawnWebhook({
        certs,
        cli,
        logFile: join(tmp.path, `${name}.log`),
        logLevel: flags['log-level'],
        nodeArgs: [...(flags['node-args'] ? flags['node-args'].split(' ') : []), ...prof(name)],
      });
    if (selectedServers.has('fastify'))
      servers.fastify = await spawnBaseline({
        certs,
        logFile: join(tmp.path, 'fastify.log'),
        script: join(here, 'fastify-server.js'),
        nodeArgs: prof('fastify'),
      });
    if (selectedServers.has('node'))
      servers.node = await spawnBaseline({
        certs,
        logFile: join(tmp.path, 'node.log'),
        script: join(here, 'baseline-server.js'),
        nodeArgs: prof('node'),
      });
    const active = SERVERS.filter((s) => servers[s]);

    const agent = keepAliveAgent(ca, 1);
    const expected = new Map<string, string>();
    for (const p of payloads)
      for (const s of active)
        expected.set(
          `${p.name} ${s}`,
          (await post({ agent, port: servers[s]!.port, path: `${p.path}?timeout=10s`, body: p.body })).body,
        );
    agent.destroy();

    const results: { payload: string; path: string; bytes: number; description: string; rounds: Round[] }[] =
      [];
    for (const p of payloads) {
      console.log(`\n${p.name} (${p.body.length} B → ${p.path}): ${p.description}`);
      const rounds: Round[] = [];
      for (let r = 1; r <= ROUNDS; r++) {
        const order = rotate(active, r - 1);
        let discarded = 0;
        for (;;) {
          const figures: Trio<RunFigure> = {};
          let highest = loadNow();
          for (const s of order) {
            figures[s] = await load(servers[s]!, p, ca, expected.get(`${p.name} ${s}`)!);
            highest = Math.max(highest, figures[s].load);
          }
          if (highest > maxLoad && discarded < RETRIES) {
            discarded++;
            console.log(`  round ${r}: load ${highest} > ${maxLoad}, run again`);
            continue;
          }
          const round: Round = {
            round: r,
            order,
            figures,
            webhookVsNode: ratio(figures.webhook, figures.node),
            webhookVsFastify: ratio(figures.webhook, figures.fastify),
            fastifyVsNode: ratio(figures.fastify, figures.node),
            p99VsNode:
              figures.webhook && figures.node ? round2(figures.webhook.p99 / figures.node.p99) : undefined,
            cpuWebhookVsNode: cpuRatio(figures.webhook, figures.node),
            cpuWebhookVsFastify: cpuRatio(figures.webhook, figures.fastify),
            variants: Object.fromEntries(
              [...VARIANTS.keys()].map((v) => [
                v,
                {
                  vsNode: ratio(figures[v], figures.node),
                  vsFastify: ratio(figures[v], figures.fastify),
                  cpuVsNode: cpuRatio(figures[v], figures.node),
                  cpuVsFastify: cpuRatio(figures[v], figures.fastify),
                },
              ]),
            ),
            load: highest,
            discarded,
          };
          rounds.push(round);
          console.log(
            `  round ${r} (load ≤ ${highest}${discarded ? `, ${discarded} rerun` : ''}): ` +
              order.map((s) => describeRun(s, figures[s]!)).join(' | ') +
              ` | webhook/node ${round.webhookVsNode ?? '-'} webhook/fastify ${round.webhookVsFastify ?? '-'} fastify/node ${round.fastifyVsNode ?? '-'}` +
              Object.entries(round.variants)
                .map(([v, x]) => ` ${v}/node ${x.vsNode ?? '-'} ${v}/fastify ${x.vsFastify ?? '-'}`)
                .join(''),
          );
          break;
        }
      }
      results.push({
        payload: p.name,
        path: p.path,
        bytes: p.body.length,
        description: p.description,
        rounds,
      });
    }

    const latency: LatencyRow[] = [];
    for (const connections of LATENCY_CONNECTIONS) {
      for (const p of payloads) {
        const row: LatencyRow = { payload: p.name, connections, rounds: [] };
        for (let r = 1; r <= ROUNDS; r++) {
          const figures: Trio<LatencyFigure> = {};
          for (const s of rotate(active, r - 1))
            figures[s] = await measureLatency({
              port: servers[s]!.port,
              ca,
              path: `${p.path}?timeout=10s`,
              body: p.body,
              connections,
              durationMs: LATENCY_MS,
              warmupMs: 500,
              expectBody: expected.get(`${p.name} ${s}`)!,
            });
          row.rounds.push({ figures, load: loadNow() });
          console.log(
            `  latency ${p.name} ×${connections} round ${r}: ` +
              active.map((s) => `${label(s)} p50 ${figures[s]!.p50} p99 ${figures[s]!.p99} µs`).join(' | '),
          );
        }
        latency.push(row);
      }
    }

    const memoryAtEnd = Object.fromEntries(active.map((s) => [s, memoryOf(servers[s]!.pid)?.hwmMiB ?? NaN]));
    const figureSummary = (rounds: Round[], s: ServerName) => {
      const fs = rounds.map((x) => x.figures[s]).filter((f): f is RunFigure => f !== undefined);
      if (fs.length === 0) return undefined;
      return {
        rps: Math.round(median(fs.map((x) => x.rps))),
        p50: median(fs.map((x) => x.p50)),
        p99: median(fs.map((x) => x.p99)),
        peakRssMiB: Math.max(...fs.map((x) => x.peakRssMiB)),
        cpuUsPerRequest: median(fs.map((x) => x.cpuUsPerRequest)),
        failures: fs.reduce((n, x) => n + x.errors + x.non2xx + x.mismatches + x.timeouts, 0),
      };
    };
    const ratios = (
      rounds: Round[],
      key:
        | 'webhookVsNode'
        | 'webhookVsFastify'
        | 'fastifyVsNode'
        | 'p99VsNode'
        | 'cpuWebhookVsNode'
        | 'cpuWebhookVsFastify',
    ) => rounds.map((x) => x[key]).filter((v): v is number => v !== undefined);
    const summary = results.map((r) => ({
      payload: r.payload,
      bytes: r.bytes,
      webhookVsNode: ratios(r.rounds, 'webhookVsNode'),
      webhookVsFastify: ratios(r.rounds, 'webhookVsFastify'),
      fastifyVsNode: ratios(r.rounds, 'fastifyVsNode'),
      medianWebhookVsNode: round2(median(ratios(r.rounds, 'webhookVsNode'))),
      medianWebhookVsFastify: round2(median(ratios(r.rounds, 'webhookVsFastify'))),
      medianFastifyVsNode: round2(median(ratios(r.rounds, 'fastifyVsNode'))),
      medianP99VsNode: round2(median(ratios(r.rounds, 'p99VsNode'))),
      cpuWebhookVsNode: ratios(r.rounds, 'cpuWebhookVsNode'),
      cpuWebhookVsFastify: ratios(r.rounds, 'cpuWebhookVsFastify'),
      medianCpuWebhookVsNode: round2(median(ratios(r.rounds, 'cpuWebhookVsNode'))),
      medianCpuWebhookVsFastify: round2(median(ratios(r.rounds, 'cpuWebhookVsFastify'))),
      load: r.rounds.map((x) => x.load),
      variants: Object.fromEntries(
        [...VARIANTS.keys()].map((v) => {
          const of = (k: 'vsNode' | 'vsFastify' | 'cpuVsNode' | 'cpuVsFastify') =>
            r.rounds.map((x) => x.variants[v]?.[k]).filter((y): y is number => y !== undefined);
          return [
            v,
            {
              vsNode: of('vsNode'),
              vsFastify: of('vsFastify'),
              medianVsNode: round2(median(of('vsNode'))),
              medianVsFastify: round2(median(of('vsFastify'))),
              medianCpuVsNode: round2(median(of('cpuVsNode'))),
              medianCpuVsFastify: round2(median(of('cpuVsFastify'))),
              figures: figureSummary(r.rounds, v),
            },
          ];
        }),
      ),
      webhook: figureSummary(r.rounds, 'webhook'),
      fastify: figureSummary(r.rounds, 'fastify'),
      node: figureSummary(r.rounds, 'node'),
    }));
    const latencySummary = latency.map((row) => {
      const per = (s: ServerName, q: 'p50' | 'p99') =>
        median(row.rounds.map((x) => x.figures[s]?.[q]).filter((v): v is number => v !== undefined));
      const added = (q: 'p50' | 'p99') =>
        Math.round(
          median(
            row.rounds
              .filter((x) => x.figures.webhook && x.figures.node)
              .map((x) => x.figures.webhook![q] - x.figures.node![q]),
          ),
        );
      return {
        payload: row.payload,
        connections: row.connections,
        p50: Object.fromEntries(active.map((s) => [s, per(s, 'p50')])),
        p99: Object.fromEntries(active.map((s) => [s, per(s, 'p99')])),
        webhookAddsP50: added('p50'),
        webhookAddsP99: added('p99'),
        failures: row.rounds.reduce(
          (n, x) => n + active.reduce((m, s) => m + (x.figures[s]?.failures ?? 0), 0),
          0,
        ),
        load: row.rounds.map((x) => x.load),
      };
    });

    const webhookHwm = memoryAtEnd['webhook'] ?? NaN;
    const checks = [
      ...summary
        .filter((s) => s.webhookVsNode.length > 0)
        .map((s) => ({
          target: `webhook ≥ ${TARGETS.vsNode} × raw node (${s.payload})`,
          value: s.medianWebhookVsNode,
          ok: s.medianWebhookVsNode >= TARGETS.vsNode,
        })),
      ...summary
        .filter((s) => s.webhookVsFastify.length > 0)
        .map((s) => ({
          target: `webhook ≥ ${TARGETS.vsFastify} × bare Fastify (${s.payload})`,
          value: s.medianWebhookVsFastify,
          ok: s.medianWebhookVsFastify >= TARGETS.vsFastify,
        })),
      ...summary
        .filter((s) => s.webhookVsNode.length > 0)
        .map((s) => ({
          target: `webhook p99 ≤ ${TARGETS.p99VsNode}× raw node's (${s.payload})`,
          value: s.medianP99VsNode,
          ok: s.medianP99VsNode <= TARGETS.p99VsNode,
        })),
      ...engine.map((e) => ({
        target: `rules ≤ ${TARGETS.engineRatio} × JSON.parse (${e.payload})`,
        value: Math.round(e.ratio * 1000) / 1000,
        ok: e.ratio <= TARGETS.engineRatio,
      })),
      ...(readyMs.length > 0
        ? [
            {
              target: `ready ≤ ${TARGETS.readyMs} ms (max of runs)`,
              value: Math.max(...readyMs),
              ok: Math.max(...readyMs) <= TARGETS.readyMs,
            },
          ]
        : []),
      ...(servers.webhook
        ? [
            {
              target: `webhook RSS ≤ ${TARGETS.rssMiB} MiB (VmHWM)`,
              value: round2(webhookHwm),
              ok: webhookHwm <= TARGETS.rssMiB,
            },
          ]
        : []),
      ...summary.map((s) => ({
        target: `zero failed requests (${s.payload})`,
        value: (s.webhook?.failures ?? 0) + (s.fastify?.failures ?? 0) + (s.node?.failures ?? 0),
        ok: (s.webhook?.failures ?? 0) + (s.fastify?.failures ?? 0) + (s.node?.failures ?? 0) === 0,
      })),
      ...latencySummary.map((l) => ({
        target: `zero failed latency requests (${l.payload}, ${l.connections} conn.)`,
        value: l.failures,
        ok: l.failures === 0,
      })),
    ];

    const cell = (f: ReturnType<typeof figureSummary>, k: 'rps' | 'cpuUsPerRequest') =>
      f ? String(f[k]) : '-';
    const lat = (f: ReturnType<typeof figureSummary>) => (f ? `${f.p50} / ${f.p99}` : '-');
    console.log('\nsummary (medians over rounds; ratios are medians of the rounds’ ratios):');
    console.log(
      '| payload | bytes | req/s webhook / Fastify / node | webhook/node | webhook/Fastify | Fastify/node | p50/p99 ms webhook · Fastify · node | CPU µs/review webhook / Fastify / node | load |',
    );
    console.log('|---|---:|---|---|---|---|---|---|---|');
    for (const s of summary)
      console.log(
        `| ${s.payload} | ${s.bytes} | ${cell(s.webhook, 'rps')} / ${cell(s.fastify, 'rps')} / ${cell(s.node, 'rps')}` +
          ` | **${s.medianWebhookVsNode}** (${s.webhookVsNode.join(', ')}) | **${s.medianWebhookVsFastify}** (${s.webhookVsFastify.join(', ')})` +
          ` | **${s.medianFastifyVsNode}** (${s.fastifyVsNode.join(', ')}) | ${lat(s.webhook)} · ${lat(s.fastify)} · ${lat(s.node)}` +
          ` | ${cell(s.webhook, 'cpuUsPerRequest')} / ${cell(s.fastify, 'cpuUsPerRequest')} / ${cell(s.node, 'cpuUsPerRequest')} | ${s.load.join(', ')} |`,
      );
    for (const s of summary)
      console.log(
        `by CPU per review (${s.payload}): webhook/node **${s.medianCpuWebhookVsNode}** (${s.cpuWebhookVsNode.join(', ')}), webhook/Fastify **${s.medianCpuWebhookVsFastify}** (${s.cpuWebhookVsFastify.join(', ')})`,
      );
    for (const s of summary)
      for (const [v, x] of Object.entries(s.variants))
        console.log(
          `variant ${v} (${s.payload}): ${v}/node **${x.medianVsNode}** (${x.vsNode.join(', ')}), ${v}/Fastify **${x.medianVsFastify}** (${x.vsFastify.join(', ')}), by CPU ${x.medianCpuVsNode} / ${x.medianCpuVsFastify}, ${x.figures?.rps ?? '-'} req/s, p50/p99 ${x.figures?.p50}/${x.figures?.p99} ms, CPU ${x.figures?.cpuUsPerRequest ?? '-'} µs/review`,
        );
    if (latencySummary.length > 0) {
      console.log('\nlatency (µs, medians over rounds; "adds" = webhook − raw node within each round):');
      console.log(
        `| payload | connections | p50 ${active.map(label).join(' / ')} | p99 ${active.map(label).join(' / ')} | webhook adds p50 | webhook adds p99 | load |`,
      );
      console.log('|---|---:|---|---|---:|---:|---|');
      for (const l of latencySummary)
        console.log(
          `| ${l.payload} | ${l.connections} | ${active.map((s) => l.p50[s]).join(' / ')} | ${active.map((s) => l.p99[s]).join(' / ')} | ${l.webhookAddsP50} | ${l.webhookAddsP99} | ${l.load.join(', ')} |`,
        );
    }
    console.log(
      `\npeak RSS (VmHWM): ${active.map((s) => `${label(s)} ${round2(memoryAtEnd[s] ?? NaN)} MiB`).join(', ')}`,
    );
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
        maxLoad,
        servers: active,
        latencyConnections: LATENCY_CONNECTIONS,
        latencySeconds: LATENCY_MS / 1000,
      },
      engine,
      readyMs,
      memory: Object.fromEntries(active.map((s) => [s, round2(memoryAtEnd[s] ?? NaN)])),
      results,
      summary,
      latency,
      latencySummary,
      checks,
    };
    writeFileSync(join(resultsDir, 'latest.json'), JSON.stringify(out, null, 2) + '\n');
    console.log(`\nwrote ${join(resultsDir, 'latest.json')}`);
    if (!flags['no-chart'] && summary.length > 0 && servers.webhook && servers.fastify && servers.node) {
      const svg = renderChart(
        summary.map((s) => ({
          label: s.payload,
          webhook: s.webhook!.rps,
          fastify: s.fastify!.rps,
          node: s.node!.rps,
          webhookVsNode: s.medianWebhookVsNode,
          webhookVsFastify: s.medianWebhookVsFastify,
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
    await Promise.allSettled(SERVERS.flatMap((s) => servers[s]?.stop() ?? []));
    await tmp.remove();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
