/**
 * `npm run bench -- count`: instructions per review, counted by valgrind's
 * callgrind (every instruction the process executes, all threads), which does
 * not depend on what else the machine is doing: two builds can be compared on a
 * loaded machine where CPU time cannot.
 *
 * Each app (the webhook, other builds given with --variant, bare Fastify with
 * the project's transport options and body reader, Fastify with its defaults,
 * raw node's handler) answers reviews through `inject()` in a process of its
 * own (bench/count-driver.ts): no TLS, sockets or HTTP parsing, which every
 * server shares. After a warm-up of every payload, --reviews reviews of each
 * payload run in turn between marks at which callgrind writes its counters
 * (`--dump-before=uv_os_getpriority`), so start-up, warm-up and JIT compilation
 * of the warm-up stay out of the counts; a young-generation collection at each
 * mark keeps each payload's garbage collection in its own count.
 *
 * Flags: --apps webhook,project,defaults,node, --variant NAME=ROOT (another
 * build: ROOT holds its dist/ and node_modules/), --payloads a,b, --reviews N
 * (300), --warmup N (150 of each payload), --jobs N (2 valgrind runs at once),
 * --log-level L (info). Writes bench/results/count.json.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { callgrindNodeArgs, dumpTotal } from './lib/callgrind.js';
import { tempDir } from '../test/kit/key-files.js';
import { writeBenchResult } from './lib/results.js';
import { benchPayloads } from '../test/kit/payloads.js';

const run = promisify(execFile);
const { values: flags } = parseArgs({
  options: {
    apps: { type: 'string', default: 'webhook,project,defaults,node' },
    variant: { type: 'string', multiple: true, default: [] },
    payloads: { type: 'string' },
    reviews: { type: 'string', default: '300' },
    warmup: { type: 'string', default: '150' },
    jobs: { type: 'string', default: '2' },
    'log-level': { type: 'string', default: 'info' },
  },
});
const REVIEWS = Number(flags.reviews);
const DRIVER = join(dirname(fileURLToPath(import.meta.url)), 'count-driver.js');

interface App {
  readonly name: string;
  readonly app: string;
  readonly root?: string;
}

/** Instructions per review of each payload, from one callgrind run of the driver. */
async function perReviewOf(
  app: App,
  payloads: readonly string[],
  dir: string,
): Promise<Record<string, number>> {
  const out = join(dir, `${app.name}.out`);
  const args = callgrindNodeArgs(out, DRIVER, [
    '--app',
    app.app,
    '--warmup',
    flags.warmup!,
    '--counts',
    payloads.map((p) => `${p}=${REVIEWS}`).join(','),
    '--log-level',
    flags['log-level']!,
    ...(app.root ? ['--root', app.root] : []),
  ]);
  await run('valgrind', args, { maxBuffer: 64 * 1024 * 1024 });
  // Dump 1 is start-up and warm-up; dump k + 1 is the k-th payload's reviews.
  const totalOf = (n: number) => dumpTotal(out, n, app.name);
  return Object.fromEntries(payloads.map((p, k) => [p, Math.round(totalOf(k + 2) / REVIEWS)]));
}

/** Runs the tasks, at most `jobs` at a time. */
async function pool<T>(tasks: (() => Promise<T>)[], jobs: number): Promise<T[]> {
  const out: T[] = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < tasks.length; i = next++) out[i] = await tasks[i]!();
  };
  await Promise.all(Array.from({ length: Math.max(1, jobs) }, worker));
  return out;
}

async function main() {
  const selected = flags.payloads?.split(',');
  const payloads = benchPayloads()
    .map((p) => p.name)
    .filter((p) => !selected || selected.includes(p));
  const apps: App[] = [
    ...flags.apps
      .split(',')
      .filter(Boolean)
      .map((a) => ({ name: a, app: a })),
    ...(flags.variant ?? []).map((v) => ({
      name: v.slice(0, v.indexOf('=')),
      app: 'webhook',
      root: v.slice(v.indexOf('=') + 1),
    })),
  ];
  console.log(
    `load ${readFileSync('/proc/loadavg', 'utf8').trim()}; ${REVIEWS} reviews per payload after ${flags.warmup} of each`,
  );
  const tmp = await tempDir('bench-count-');
  const perReview: Record<string, Record<string, number>> = {};
  try {
    await pool(
      apps.map((app) => async () => {
        perReview[app.name] = await perReviewOf(app, payloads, tmp.path);
        console.log(`  ${app.name}: ${JSON.stringify(perReview[app.name])}`);
      }),
      Number(flags.jobs),
    );
  } finally {
    await tmp.remove();
  }
  console.log(
    '\ninstructions per review (thousands), and b/a = what a throughput ratio would be if instructions were all',
  );
  console.log(`| app | ${payloads.join(' | ')} |`);
  console.log(`|---|${payloads.map(() => '---:').join('|')}|`);
  for (const app of apps)
    console.log(
      `| ${app.name} | ${payloads.map((p) => (perReview[app.name]![p]! / 1000).toFixed(1)).join(' | ')} |`,
    );
  const ratioRows: [string, string][] = apps
    .filter((a) => a.app === 'webhook')
    .flatMap((a) => [
      [a.name, 'defaults'],
      [a.name, 'project'],
      [a.name, 'node'],
    ]);
  ratioRows.push(['project', 'defaults'], ['defaults', 'node'], ['project', 'node']);
  for (const v of apps.filter((a) => a.root)) ratioRows.unshift([v.name, 'webhook']);
  for (const [a, b] of ratioRows)
    if (perReview[a] && perReview[b])
      console.log(
        `  ${a}/${b}: ${payloads.map((p) => `${p} ${(perReview[b]![p]! / perReview[a]![p]!).toFixed(3)}`).join(', ')}`,
      );
  writeBenchResult('count.json', { reviews: REVIEWS, perReview });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
