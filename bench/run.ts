/**
 * `npm run bench`: the built webhook against three baselines, over HTTPS
 * keep-alive (HTTP/1.1) with autocannon at 32 connections: Fastify with its
 * defaults (the framework's floor), bare Fastify with the project's transport
 * options and body reader (both bench/fastify-server.ts), and raw
 * `node:https` (bench/baseline-server.ts), all answering a fixed, correct
 * review. Per payload the four alternate in rounds (the order rotates every
 * round), and each round's ratios are taken within the round.
 * Then latency at 1 and 4 connections (bench/lib/latency.ts), engine cost and
 * readiness time. Writes bench/results/latest.json and
 * bench/results/benchmarks-chart.svg (docs/dev/benchmarks-chart.svg only with
 * --update-docs-chart, when the run's figures go into docs/dev/benchmarks.md).
 *
 * Flags: --duration S (per server and round, default 5), --rounds N (3),
 * --connections N (32), --payloads a,b, --servers webhook,fastify,defaults,node
 * (also: transport, body: Fastify defaults plus only the project's transport
 * options or only its body reader),
 * --latency-connections 1,4 (empty: skip), --latency-duration S (3),
 * --max-load L (a round that ends with the 1-minute load average above L is
 * run again, at most --retries N times; default L = 2 × CPUs, N = 2),
 * --variant NAME=PATH (repeatable: another build's dist/cli/main.js, run as one
 * more webhook in the same rounds, to measure a change against the current
 * build), --cpu-prof (profiles into bench/results/profiles/), --no-chart,
 * --log-level L (webhook, default info), --node-args "…" (extra Node flags for
 * the webhook), --readiness-runs N (5), --no-engine, --pin CPU (the servers
 * on CPU, the load generator on the others; default: the last CPU when there
 * are two or more, `none` to not pin), --prewarm S (before the first round,
 * S seconds of load per server and payload, not measured: every server's JIT
 * compilation settles first, as it has in a replica that has run for a while;
 * default 0).
 */
import autocannon, { type Result } from 'autocannon';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderChart } from '../test/kit/bench-chart.js';
import { measureEngine, type EngineFigure } from './lib/engine.js';
import { measureLatency, type LatencyFigure } from './lib/latency.js';
import {
  CLI,
  makeCerts,
  repoRoot,
  spawnBaseline,
  spawnWebhook,
  type Child,
} from '../test/kit/server-process.js';
import { cpuMsOf, memoryOf, sampleMemory } from '../test/kit/process-stats.js';
import { tempDir } from '../test/kit/key-files.js';
import { waitReady } from '../test/kit/http.js';
import { keepAliveAgent, post } from '../test/kit/webhook-client.js';
import { benchPayloads, type BenchPayload } from '../test/kit/payloads.js';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    payloads: { type: 'string' },
    servers: { type: 'string', default: 'webhook,fastify,defaults,node' },
    pin: { type: 'string' },
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
    prewarm: { type: 'string', default: '0' },
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
const SERVERS = ['webhook', ...VARIANTS.keys(), 'fastify', 'transport', 'body', 'defaults', 'node'];
type ServerName = string;
const selectedServers = new Set([...flags.servers.split(','), ...VARIANTS.keys()]);
const LABEL: Record<ServerName, string> = {
  webhook: 'webhook',
  fastify: 'bare Fastify (project transport + body reader)',
  defaults: 'Fastify defaults',
  transport: 'Fastify defaults + project transport options only',
  body: 'Fastify defaults + project body reader only',
  node: 'raw node',
};
const SHORT: Record<ServerName, string> = { fastify: 'project', defaults: 'defaults' };
const label = (s: ServerName) => LABEL[s] ?? s;
const short = (s: ServerName) => SHORT[s] ?? s;

/**
 * The ratios taken within each round, "a/b" = a's throughput over b's (and b's CPU per
 * review over a's): every webhook build against each baseline, then the baselines.
 */
const PAIRS: readonly (readonly [ServerName, ServerName])[] = [
  ...['webhook', ...VARIANTS.keys()].flatMap(
    (w) =>
      [
        [w, 'node'],
        [w, 'defaults'],
        [w, 'fastify'],
      ] as const,
  ),
  ['defaults', 'node'],
  ['fastify', 'node'],
  ['fastify', 'defaults'],
  ['transport', 'defaults'],
  ['body', 'defaults'],
];
const pairKey = ([a, b]: readonly [ServerName, ServerName]) => `${short(a)}/${short(b)}`;

const TARGETS = {
  /** Issue 25: the webhook ≥ 0.8 of raw node and ≥ 0.92 of Fastify with its defaults. */
  vsNode: 0.8,
  vsDefaults: 0.92,
  /** The project's transport and body reader within 5 % of Fastify's defaults. */
  projectVsDefaults: 0.95,
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
  /** Throughput ratios within the round, by pair ("webhook/node"). */
  readonly ratios: Record<string, number>;
  /**
   * CPU per review, b's over a's, by pair: the throughput ratios servers with a core of their
   * own would reach, less disturbed by other work on a shared machine than requests per second.
   */
  readonly cpuRatios: Record<string, number>;
  readonly p99VsNode?: number;
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

/** What every autocannon run sends: the payload's reviews to `child` over HTTPS, CONNECTIONS at once. */
function reviewsTo(child: Child, p: BenchPayload, ca: string) {
  return {
    url: `https://127.0.0.1:${child.port}${p.path}?timeout=10s`,
    method: 'POST' as const,
    body: p.body,
    headers: { 'content-type': 'application/json' },
    connections: CONNECTIONS,
    servername: 'localhost',
    tlsOptions: { ca },
  };
}

/** One autocannon run against `child`; the expected body makes every wrong answer a mismatch. */
async function load(child: Child, p: BenchPayload, ca: string, expectBody: string): Promise<RunFigure> {
  const memory = sampleMemory(child.pid, 200);
  const cpuAtStart = cpuMsOf(child.pid);
  const result: Result = await autocannon({
    ...reviewsTo(child, p, ca),
    pipelining: 1,
    duration: DURATION,
    timeout: 10,
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

/**
 * --prewarm: every server answers every payload for S seconds before the rounds, unmeasured.
 * Without it the first rounds also measure the JIT compilation of a server just started,
 * which costs the webhook (more code to compile) more than the baselines.
 */
async function prewarm(
  servers: Partial<Record<string, Child>>,
  active: readonly string[],
  payloads: readonly BenchPayload[],
  ca: string,
): Promise<void> {
  const seconds = Number(flags.prewarm);
  if (!(seconds > 0)) return;
  console.log(`prewarm: ${seconds} s per server and payload`);
  for (const p of payloads)
    for (const s of active) await autocannon({ ...reviewsTo(servers[s]!, p, ca), duration: seconds });
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
    `${short(name)} ${f.rps.toFixed(0)} req/s p50 ${f.p50} p99 ${f.p99} ms cpu ${f.cpuUsPerRequest} µs` +
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

/** Each pair's ratio within one round, where both servers ran. */
function pairRatios(
  figures: Trio<RunFigure>,
  of: (a: RunFigure | undefined, b: RunFigure | undefined) => number | undefined,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const pair of PAIRS) {
    const r = of(figures[pair[0]], figures[pair[1]]);
    if (r !== undefined) out[pairKey(pair)] = r;
  }
  return out;
}

/** The pairs' per-round values and their medians. */
function pairSummary(rounds: readonly Round[], key: 'ratios' | 'cpuRatios') {
  const out: Record<string, { rounds: number[]; median: number }> = {};
  for (const pair of PAIRS) {
    const k = pairKey(pair);
    const xs = rounds.map((x) => x[key][k]).filter((v): v is number => v !== undefined);
    if (xs.length > 0) out[k] = { rounds: xs, median: round2(median(xs)) };
  }
  return out;
}

/** The CPU the servers run on (--pin), the load generator taking the others; undefined: not pinned. */
function pinning(nproc: number): { servers: string; client: string } | undefined {
  const pin = flags.pin ?? (nproc >= 2 ? String(nproc - 1) : 'none');
  if (pin === 'none') return undefined;
  const others = [...Array(nproc).keys()].filter((c) => String(c) !== pin);
  if (others.length === 0) return undefined;
  const client = others.join(',');
  execFileSync('taskset', ['-a', '-p', '-c', client, String(process.pid)], { stdio: 'ignore' });
  return { servers: pin, client };
}

async function main() {
  const root = repoRoot();
  if (!existsSync(CLI)) throw new Error('dist/cli/main.js is missing: run `npm run build` first');
  const here = dirname(fileURLToPath(import.meta.url));
  const resultsDir = join(root, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const tmp = await tempDir('bench-');
  const info = machine();
  const maxLoad = flags['max-load'] !== undefined ? Number(flags['max-load']) : 2 * info.nproc;
  const pinned = pinning(info.nproc);
  console.log(
    `machine: ${info.nproc} CPUs, ${info.cpuModel}, node ${info.node}, load ${info.loadAvgAtStart}` +
      (pinned ? `; servers pinned to CPU ${pinned.servers}, load generator to ${pinned.client}` : ''),
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
    const webhookArgs = (name: string) => [
      ...(flags['node-args'] ? flags['node-args'].split(' ') : []),
      ...prof(name),
    ];
    const cpus = pinned?.servers;
    if (selectedServers.has('webhook'))
      servers.webhook = await spawnWebhook({
        certs,
        logFile: join(tmp.path, 'webhook.log'),
        logLevel: flags['log-level'],
        nodeArgs: webhookArgs('webhook'),
        cpus,
      });
    for (const [name, cli] of VARIANTS)
      servers[name] = await spawnWebhook({
        certs,
        cli,
        logFile: join(tmp.path, `${name}.log`),
        logLevel: flags['log-level'],
        nodeArgs: webhookArgs(name),
        cpus,
      });
    for (const [name, script, args] of [
      ['fastify', 'fastify-server.js', []],
      ['defaults', 'fastify-server.js', ['--defaults']],
      ['transport', 'fastify-server.js', ['--transport']],
      ['body', 'fastify-server.js', ['--body-reader']],
      ['node', 'baseline-server.js', []],
    ] as const)
      if (selectedServers.has(name))
        servers[name] = await spawnBaseline({
          certs,
          logFile: join(tmp.path, `${name}.log`),
          script: join(here, script),
          args,
          nodeArgs: prof(name),
          cpus,
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

    await prewarm(servers, active, payloads, ca);

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
            ratios: pairRatios(figures, ratio),
            cpuRatios: pairRatios(figures, cpuRatio),
            p99VsNode:
              figures.webhook && figures.node ? round2(figures.webhook.p99 / figures.node.p99) : undefined,
            load: highest,
            discarded,
          };
          rounds.push(round);
          console.log(
            `  round ${r} (load ≤ ${highest}${discarded ? `, ${discarded} rerun` : ''}): ` +
              order.map((s) => describeRun(s, figures[s]!)).join(' | ') +
              '\n    ' +
              Object.entries(round.ratios)
                .map(([k, v]) => `${k} ${v}`)
                .join(' '),
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
              active.map((s) => `${short(s)} p50 ${figures[s]!.p50} p99 ${figures[s]!.p99} µs`).join(' | '),
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
    const summary = results.map((r) => ({
      payload: r.payload,
      bytes: r.bytes,
      ratios: pairSummary(r.rounds, 'ratios'),
      cpuRatios: pairSummary(r.rounds, 'cpuRatios'),
      medianP99VsNode: round2(
        median(r.rounds.map((x) => x.p99VsNode).filter((v): v is number => v !== undefined)),
      ),
      load: r.rounds.map((x) => x.load),
      figures: Object.fromEntries(active.map((s) => [s, figureSummary(r.rounds, s)])),
    }));
    const latencySummary = latency.map((row) => {
      const per = (s: ServerName, q: 'p50' | 'p99') =>
        median(row.rounds.map((x) => x.figures[s]?.[q]).filter((v): v is number => v !== undefined));
      const adds = (s: ServerName, q: 'p50' | 'p99') =>
        Math.round(
          median(
            row.rounds
              .filter((x) => x.figures[s] && x.figures.node)
              .map((x) => x.figures[s]![q] - x.figures.node![q]),
          ),
        );
      return {
        payload: row.payload,
        connections: row.connections,
        p50: Object.fromEntries(active.map((s) => [s, per(s, 'p50')])),
        p99: Object.fromEntries(active.map((s) => [s, per(s, 'p99')])),
        /** What each server adds over raw node within each round (median), µs. */
        addsP50: Object.fromEntries(active.map((s) => [s, adds(s, 'p50')])),
        addsP99: Object.fromEntries(active.map((s) => [s, adds(s, 'p99')])),
        failures: row.rounds.reduce(
          (n, x) => n + active.reduce((m, s) => m + (x.figures[s]?.failures ?? 0), 0),
          0,
        ),
        load: row.rounds.map((x) => x.load),
      };
    });

    const webhookHwm = memoryAtEnd['webhook'] ?? NaN;
    const ratioCheck = (key: string, at: number, what: string) =>
      summary
        .filter((s) => s.ratios[key])
        .map((s) => ({
          target: `${what} (${s.payload})`,
          value: s.ratios[key]!.median,
          ok: s.ratios[key]!.median >= at,
        }));
    const checks = [
      ...ratioCheck('webhook/node', TARGETS.vsNode, `webhook ≥ ${TARGETS.vsNode} × raw node`),
      ...ratioCheck(
        'webhook/defaults',
        TARGETS.vsDefaults,
        `webhook ≥ ${TARGETS.vsDefaults} × Fastify defaults`,
      ),
      ...ratioCheck(
        'project/defaults',
        TARGETS.projectVsDefaults,
        `project transport + body reader ≥ ${TARGETS.projectVsDefaults} × Fastify defaults`,
      ),
      ...summary
        .filter((s) => s.ratios['webhook/node'])
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
      ...summary.map((s) => {
        const failed = active.reduce((n, x) => n + (s.figures[x]?.failures ?? 0), 0);
        return { target: `zero failed requests (${s.payload})`, value: failed, ok: failed === 0 };
      }),
      ...latencySummary.map((l) => ({
        target: `zero failed latency requests (${l.payload}, ${l.connections} conn.)`,
        value: l.failures,
        ok: l.failures === 0,
      })),
    ];

    const names = active.map(short).join(' / ');
    const each = (
      s: (typeof summary)[number],
      f: (x: NonNullable<ReturnType<typeof figureSummary>>) => string,
    ) => active.map((x) => (s.figures[x] ? f(s.figures[x]) : '-')).join(' / ');
    const keys = PAIRS.map(pairKey).filter((k) => summary.some((s) => s.ratios[k]));
    console.log(
      '\nsummary (medians over rounds; ratios are medians of the rounds’ ratios, rounds in brackets):',
    );
    console.log(`servers: ${active.map((s) => `${short(s)} = ${label(s)}`).join(', ')}`);
    console.log(`| payload | bytes | req/s ${names} | ${keys.join(' | ')} | load |`);
    console.log(`|---|---:|---|${keys.map(() => '---').join('|')}|---|`);
    for (const s of summary)
      console.log(
        `| ${s.payload} | ${s.bytes} | ${each(s, (f) => String(f.rps))} | ` +
          keys
            .map((k) => (s.ratios[k] ? `**${s.ratios[k].median}** (${s.ratios[k].rounds.join(', ')})` : '-'))
            .join(' | ') +
          ` | ${s.load.join(', ')} |`,
      );
    console.log('\nCPU per review (µs) and the ratios it gives:');
    console.log(`| payload | CPU µs/review ${names} | p50/p99 ms ${names} | ${keys.join(' | ')} |`);
    console.log(`|---|---|---|${keys.map(() => '---').join('|')}|`);
    for (const s of summary)
      console.log(
        `| ${s.payload} | ${each(s, (f) => String(f.cpuUsPerRequest))} | ${each(s, (f) => `${f.p50}/${f.p99}`)} | ` +
          keys.map((k) => (s.cpuRatios[k] ? `${s.cpuRatios[k].median}` : '-')).join(' | ') +
          ' |',
      );
    if (latencySummary.length > 0) {
      console.log('\nlatency (µs, medians over rounds; "adds" = server − raw node within each round):');
      const others = active.filter((s) => s !== 'node');
      console.log(
        `| payload | connections | p50 ${names} | p99 ${names} | ${others.map((s) => `${short(s)} adds p50 / p99`).join(' | ')} | load |`,
      );
      console.log(`|---|---:|---|---|${others.map(() => '---:').join('|')}|---|`);
      for (const l of latencySummary)
        console.log(
          `| ${l.payload} | ${l.connections} | ${active.map((s) => l.p50[s]).join(' / ')} | ${active.map((s) => l.p99[s]).join(' / ')} | ` +
            others.map((s) => `${l.addsP50[s]} / ${l.addsP99[s]}`).join(' | ') +
            ` | ${l.load.join(', ')} |`,
        );
    }
    console.log(
      `\npeak RSS (VmHWM): ${active.map((s) => `${short(s)} ${round2(memoryAtEnd[s] ?? NaN)} MiB`).join(', ')}`,
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
        pinned,
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
          webhook: s.figures['webhook']!.rps,
          fastify: s.figures['fastify']!.rps,
          node: s.figures['node']!.rps,
          webhookVsNode: s.ratios['webhook/node']!.median,
          webhookVsFastify: s.ratios['webhook/project']!.median,
        })),
        `${CONNECTIONS} keep-alive HTTPS connections, ${ROUNDS} rounds × ${DURATION} s, ${info.nproc} CPUs (${info.cpuModel}), node ${info.node}, ${out.date.slice(0, 10)}`,
      );
      // The tracked chart shows the figures of docs/dev/benchmarks.md: only replaced when asked.
      const chartFile = flags['update-docs-chart']
        ? join(root, 'docs', 'dev', 'benchmarks-chart.svg')
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
