/**
 * `npm run bench -- count-https`: instructions per review of each server as the
 * benchmark runs it, over HTTPS (TLS, HTTP parsing and socket I/O included):
 * the webhook (`serve`, other builds with --variant), bare Fastify with the
 * project's transport options and body reader, Fastify with its defaults and
 * raw node. Each server runs under `valgrind --tool=callgrind` (every
 * instruction of the process, all threads; the machine's load does not change
 * the count) and answers one keep-alive connection from this process, one
 * review at a time: a warm-up of every payload, then --reviews reviews of each
 * payload in turn, with `callgrind_control --dump` between them so each
 * payload's reviews get a count of their own (start-up and warm-up left out).
 *
 * Flags: --servers webhook,fastify,defaults,node, --variant NAME=PATH (another
 * build's dist/cli/main.js), --payloads a,b, --reviews N (300), --warmup N
 * (150 of each payload), --jobs N (servers measured at once, 2), --log-level L
 * (the webhook's, info), --node-args "…" (every server's Node flags, default
 * --single-threaded), --start-minutes N (how long a server may take to listen
 * under valgrind, 45), --keep DIR (copy each server's callgrind dumps there,
 * for callgrind_annotate: NAME.out.N, dump N + 1 the N-th payload's reviews).
 * Writes bench/results/count-https.json.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { dumpTotal } from './lib/callgrind.js';
import { keepAliveAgent, post } from '../test/kit/webhook-client.js';
import { makeCerts, spawnBaseline, spawnWebhook, type Child } from '../test/kit/server-process.js';
import { writeBenchResult } from './lib/results.js';
import { tempDir } from '../test/kit/key-files.js';
import { benchPayloads, type BenchPayload } from '../test/kit/payloads.js';

const run = promisify(execFile);
const { values: flags } = parseArgs({
  options: {
    servers: { type: 'string', default: 'webhook,fastify,defaults,node' },
    variant: { type: 'string', multiple: true, default: [] },
    payloads: { type: 'string' },
    reviews: { type: 'string', default: '300' },
    warmup: { type: 'string', default: '150' },
    jobs: { type: 'string', default: '2' },
    'log-level': { type: 'string', default: 'info' },
    'node-args': { type: 'string', default: '--single-threaded' },
    'start-minutes': { type: 'string', default: '45' },
    keep: { type: 'string' },
  },
});
/**
 * Node's flags for every server. --single-threaded (no background JIT, GC or
 * worker threads; all that work on the main thread) makes the counts repeat
 * within about 1 %: with background threads, how much of their work falls in a
 * count depends on timing.
 */
const NODE_ARGS = (flags['node-args'] ?? '').split(' ').filter(Boolean);
const REVIEWS = Number(flags.reviews);
const here = dirname(fileURLToPath(import.meta.url));
const VARIANTS = new Map(
  (flags.variant ?? []).map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)] as const),
);
/**
 * How long a server may take to listen, and the first reviews to be answered
 * (JIT compilation), under valgrind. The webhook loads far more modules than the
 * baselines: at a load average of 13-16 on 2 cores it took 11 minutes to log
 * `listening` under callgrind, so the earlier 10-minute bound stopped it before
 * it listened (the third round's "did not start").
 */
const START_MS = Number(flags['start-minutes']) * 60_000;

function spawnServer(name: string, dir: string, certs: { cert: string; key: string }): Promise<Child> {
  const out = join(dir, `${name}.out`);
  const wrap = ['valgrind', '--tool=callgrind', `--callgrind-out-file=${out}`];
  const logFile = join(dir, `${name}.log`);
  if (name === 'webhook' || VARIANTS.has(name))
    return spawnWebhook({
      certs,
      logFile,
      wrap,
      logLevel: flags['log-level'],
      cli: VARIANTS.get(name),
      nodeArgs: NODE_ARGS,
      timeoutMs: START_MS,
    });
  const script = join(here, name === 'node' ? 'baseline-server.js' : 'fastify-server.js');
  const args = name === 'defaults' ? ['--defaults'] : [];
  return spawnBaseline({ certs, logFile, script, args, wrap, nodeArgs: NODE_ARGS, timeoutMs: START_MS });
}

async function measure(
  name: string,
  dir: string,
  certs: { ca: string; cert: string; key: string },
  payloads: readonly BenchPayload[],
): Promise<Record<string, number>> {
  const child = await spawnServer(name, dir, certs);
  const agent = keepAliveAgent(readFileSync(certs.ca, 'utf8'), 1);
  try {
    const send = async (p: BenchPayload) => {
      const reply = await post({
        agent,
        port: child.port,
        path: `${p.path}?timeout=10s`,
        body: p.body,
        // Under valgrind on a loaded machine, the first reviews (JIT compilation) take long.
        timeoutMs: START_MS,
      });
      if (reply.status !== 200) throw new Error(`${name} ${p.name}: HTTP ${reply.status}`);
    };
    const dump = async () => {
      await run('callgrind_control', ['--dump', String(child.pid)], { timeout: 600_000 });
    };
    for (let i = 0; i < Number(flags.warmup); i++) for (const p of payloads) await send(p);
    await dump();
    for (const p of payloads) {
      for (let i = 0; i < REVIEWS; i++) await send(p);
      await dump();
    }
  } finally {
    agent.destroy();
    await child.stop(600_000);
  }
  // Dump 1 is start-up and warm-up; dump k + 1 is the k-th payload's reviews.
  const out = join(dir, `${name}.out`);
  const totalOf = (n: number) => dumpTotal(out, n, name);
  return Object.fromEntries(payloads.map((p, k) => [p.name, Math.round(totalOf(k + 2) / REVIEWS)]));
}

/** Copies the callgrind dumps (`NAME.out.N`) out of the temporary folder before it goes. */
function keepDumps(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const f of readdirSync(from)) if (/\.out\.\d+$/.test(f)) copyFileSync(join(from, f), join(to, f));
  console.log(`callgrind dumps kept in ${to}`);
}

async function main() {
  const selected = flags.payloads?.split(',');
  const payloads = benchPayloads().filter((p) => !selected || selected.includes(p.name));
  const names = [...flags.servers.split(',').filter(Boolean), ...VARIANTS.keys()];
  console.log(
    `load ${readFileSync('/proc/loadavg', 'utf8').trim()}; ${REVIEWS} reviews per payload after ${flags.warmup} of each, one connection`,
  );
  const tmp = await tempDir('bench-count-https-');
  const perReview: Record<string, Record<string, number>> = {};
  try {
    const certs = await makeCerts(join(tmp.path, 'certs'));
    const queue = [...names];
    const worker = async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        perReview[name] = await measure(name, tmp.path, certs, payloads);
        console.log(`  ${name}: ${JSON.stringify(perReview[name])}`);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Number(flags.jobs)) }, worker));
  } finally {
    if (flags.keep) keepDumps(tmp.path, flags.keep);
    await tmp.remove();
  }
  console.log('\ninstructions per review over HTTPS (thousands):');
  console.log(`| server | ${payloads.map((p) => p.name).join(' | ')} |`);
  console.log(`|---|${payloads.map(() => '---:').join('|')}|`);
  for (const n of names)
    console.log(`| ${n} | ${payloads.map((p) => (perReview[n]![p.name]! / 1000).toFixed(1)).join(' | ')} |`);
  const pairs = [
    ...['webhook', ...VARIANTS.keys()].flatMap((w) => [
      [w, 'node'],
      [w, 'defaults'],
      [w, 'fastify'],
    ]),
    ['fastify', 'defaults'],
    ['defaults', 'node'],
  ];
  console.log('ratios b/a (the throughput ratio a/b if instructions were all that counted):');
  for (const [a, b] of pairs)
    if (perReview[a!] && perReview[b!])
      console.log(
        `  ${a}/${b}: ${payloads.map((p) => (perReview[b!]![p.name]! / perReview[a!]![p.name]!).toFixed(3)).join(' / ')}`,
      );
  writeBenchResult('count-https.json', { reviews: REVIEWS, perReview });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
