/**
 * `npm run bench -- perf`: where a review's microseconds go, by CPU time. For
 * each payload, each server (the webhook, bare Fastify, Fastify with its
 * defaults, raw node) is started under `node --perf-basic-prof
 * --interpreted-frames-native-stack`, pinned to one CPU (the load generator on
 * the others), warmed up, then loaded with autocannon (32 HTTPS keep-alive
 * connections) while `perf record -e cpu-clock -c 100000 -g -p PID` samples it
 * every 100 µs of its CPU time (all threads). The call chains are sorted into
 * layers (bench/lib/perf-buckets.ts) and printed as µs of CPU per review.
 * Needs `perf` (Debian: linux-perf) and the right to record (root, or
 * kernel.perf_event_paranoid ≤ 1). Not part of CI.
 *
 * Flags: --duration S (5), --warmup S (5: JIT compilation settles), --payloads a,b, --servers webhook,fastify,defaults,node,
 * --connections N (32), --log-level L (webhook, info), --top N (also print the
 * N hottest leaf symbols of each server), --pin CPU (default: the last CPU;
 * `none`), --variant NAME=PATH (another build's dist/cli/main.js, profiled
 * like the webhook), --keep DIR (keep the perf.data files and logs there).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { loadFor } from './lib/load.js';
import { bucketPerfScript, PERF_BUCKETS, type PerfFigures } from './lib/perf-buckets.js';
import { makeCerts, spawnBaseline, spawnWebhook } from '../test/kit/server-process.js';
import { tempDir } from '../test/kit/key-files.js';
import { benchPayloads, type BenchPayload } from '../test/kit/payloads.js';
import { sleep } from '../test/kit/eventually.js';

const run = promisify(execFile);
const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    payloads: { type: 'string' },
    servers: { type: 'string', default: 'webhook,fastify,defaults,node' },
    connections: { type: 'string', default: '32' },
    'log-level': { type: 'string', default: 'info' },
    top: { type: 'string', default: '0' },
    pin: { type: 'string' },
    variant: { type: 'string', multiple: true, default: [] },
    keep: { type: 'string' },
    warmup: { type: 'string', default: '5' },
  },
});
const PERIOD_NS = 100_000;
const VARIANTS = new Map(
  (flags.variant ?? []).map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)] as const),
);

interface Measured {
  readonly server: string;
  readonly requests: number;
  readonly figures: PerfFigures;
  readonly top: string[];
}

function spawnServer(
  server: string,
  opts: { certs: { cert: string; key: string }; logFile: string; cpus?: string },
) {
  const here = dirname(fileURLToPath(import.meta.url));
  // --perf-basic-prof also turns V8's log on: one file in the temporary folder, not isolate-*.log here.
  const nodeArgs = [
    '--perf-basic-prof',
    '--interpreted-frames-native-stack',
    '--no-logfile-per-isolate',
    `--logfile=${join(tmpdir(), 'bench-perf-v8.log')}`,
  ];
  if (server === 'webhook' || VARIANTS.has(server))
    return spawnWebhook({ ...opts, logLevel: flags['log-level'], nodeArgs, cli: VARIANTS.get(server) });
  return spawnBaseline({
    ...opts,
    script: join(here, server === 'node' ? 'baseline-server.js' : 'fastify-server.js'),
    args: server === 'defaults' ? ['--defaults'] : [],
    nodeArgs,
  });
}

/** The hottest leaf symbols (JIT frames without their line and column). */
function hottest(script: string, n: number): string[] {
  const count = new Map<string, number>();
  for (const block of script.split(/\n\s*\n/)) {
    const leaf = /^\s*[0-9a-f]+ (.*) \(([^)]*)\)\s*$/.exec(block.split('\n').filter(Boolean)[1] ?? '');
    if (!leaf) continue;
    const sym = leaf[1]!.replace(/:\d+:\d+$/, '');
    count.set(sym, (count.get(sym) ?? 0) + 1);
  }
  return [...count.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([s, c]) => `${c} ${s}`);
}

async function profileOne(
  server: string,
  p: BenchPayload,
  ctx: { certs: { cert: string; key: string }; ca: string; dir: string; cpus?: string },
): Promise<Measured> {
  const child = await spawnServer(server, {
    certs: ctx.certs,
    logFile: join(ctx.dir, `${p.name}-${server}.log`),
    ...(ctx.cpus ? { cpus: ctx.cpus } : {}),
  });
  const data = join(ctx.dir, `${p.name}-${server}.perf.data`);
  let requests: number;
  try {
    await loadFor(child, p, ctx.ca, {
      seconds: Number(flags.warmup),
      connections: Number(flags.connections),
    });
    const perf = spawn(
      'perf',
      ['record', '-q', '-e', 'cpu-clock', '-c', String(PERIOD_NS), '-g', '-p', String(child.pid), '-o', data],
      { stdio: 'ignore' },
    );
    const stopped = new Promise((done) => perf.once('exit', done));
    await sleep(300);
    const result = await loadFor(child, p, ctx.ca, {
      seconds: Number(flags.duration),
      connections: Number(flags.connections),
    });
    perf.kill('SIGINT');
    await stopped;
    requests = result.requests.total ?? 0;
    if (result.errors + result.non2xx + result.mismatches + result.timeouts > 0)
      throw new Error(`${server} ${p.name}: failed requests`);
  } finally {
    await child.stop();
  }
  const { stdout } = await run('perf', ['script', '-i', data, '-F', 'tid,ip,sym,dso'], {
    maxBuffer: 1 << 30,
  });
  return { server, requests, figures: bucketPerfScript(stdout), top: hottest(stdout, Number(flags.top)) };
}

function print(p: BenchPayload, measured: readonly Measured[]): void {
  const us = (m: Measured, samples: number) => (samples * PERIOD_NS) / 1000 / Math.max(1, m.requests);
  console.log(
    `\n${p.name} (${p.body.length} B): µs of CPU per review by layer (share); ` +
      measured.map((m) => `${m.server} ${m.requests} reviews`).join(', '),
  );
  console.log(`| layer | ${measured.map((m) => m.server).join(' | ')} |`);
  console.log(`|---|${measured.map(() => '---:').join('|')}|`);
  for (const b of PERF_BUCKETS) {
    if (measured.every((m) => m.figures.samples[b] === 0)) continue;
    const cells = measured.map(
      (m) =>
        `${us(m, m.figures.samples[b]).toFixed(1)} (${((100 * m.figures.samples[b]) / Math.max(1, m.figures.total)).toFixed(0)} %)`,
    );
    console.log(`| ${b} | ${cells.join(' | ')} |`);
  }
  console.log(
    `| **total** | ${measured.map((m) => `**${us(m, m.figures.total).toFixed(1)}**`).join(' | ')} |`,
  );
  for (const m of measured)
    if (m.top.length > 0) console.log(`\n${m.server} hottest leaves:\n  ${m.top.join('\n  ')}`);
}

async function main() {
  const selected = flags.payloads?.split(',');
  const payloads = benchPayloads().filter((p) => !selected || selected.includes(p.name));
  const servers = [...flags.servers.split(','), ...VARIANTS.keys()];
  const nproc = cpus().length;
  const pin = flags.pin ?? (nproc >= 2 ? String(nproc - 1) : 'none');
  if (pin !== 'none') {
    const others = [...Array(nproc).keys()].filter((c) => String(c) !== pin).join(',');
    execFileSync('taskset', ['-a', '-p', '-c', others, String(process.pid)], { stdio: 'ignore' });
  }
  const tmp = await tempDir('bench-perf-');
  const dir = flags.keep ?? tmp.path;
  // --keep names a folder that need not exist yet.
  mkdirSync(dir, { recursive: true });
  try {
    const certs = await makeCerts(join(tmp.path, 'certs'));
    const ca = readFileSync(certs.ca, 'utf8');
    const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(`load ${loadavg()}${pin !== 'none' ? `; servers on CPU ${pin}` : ''}`);
    for (const p of payloads) {
      const measured: Measured[] = [];
      for (const s of servers)
        measured.push(await profileOne(s, p, { certs, ca, dir, ...(pin !== 'none' ? { cpus: pin } : {}) }));
      print(p, measured);
    }
    console.log(`\nload ${loadavg()}`);
  } finally {
    if (!flags.keep) await tmp.remove();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
