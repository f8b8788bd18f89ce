/**
 * `npm run bench -- profile`: where a review's microseconds go. For each payload
 * each server (the webhook, and for comparison bare Fastify and raw node) is
 * started under `node --cpu-prof`, warmed up for 1 s, loaded with autocannon
 * (32 HTTPS keep-alive connections) for --duration seconds, and stopped; the
 * samples of the measured window are sorted into buckets (bench/lib/buckets.ts)
 * and printed as main-thread µs per review. Not part of CI.
 *
 * Flags: --duration S (5), --payloads a,b, --servers webhook,fastify,defaults,node,
 * --interval µs (sampling interval, 250), --log-level L (webhook, info),
 * --connections N (32), --node-args "…" (extra Node flags for the webhook),
 * --keep DIR (keep the .cpuprofile files there).
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BUCKETS, bucketProfile, type BucketFigures, type CpuProfile } from './lib/buckets.js';
import { loadFor } from './lib/load.js';
import { cpuMsOf } from '../test/kit/process-stats.js';
import { makeCerts, spawnBaseline, spawnWebhook } from '../test/kit/server-process.js';
import { tempDir } from '../test/kit/key-files.js';
import { benchPayloads, type BenchPayload } from '../test/kit/payloads.js';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    payloads: { type: 'string' },
    servers: { type: 'string', default: 'webhook,fastify,defaults,node' },
    interval: { type: 'string', default: '250' },
    'log-level': { type: 'string', default: 'info' },
    connections: { type: 'string', default: '32' },
    'node-args': { type: 'string', default: '' },
    keep: { type: 'string' },
  },
});

interface Measured {
  readonly server: string;
  readonly payload: string;
  readonly requests: number;
  readonly cpuUsPerReview: number;
  readonly buckets: BucketFigures;
}

async function profileOne(
  server: string,
  p: BenchPayload,
  certs: { cert: string; key: string },
  ca: string,
  dir: string,
): Promise<Measured> {
  const here = dirname(fileURLToPath(import.meta.url));
  const profDir = join(dir, `${p.name}-${server}`);
  mkdirSync(profDir, { recursive: true });
  const prof = ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-interval', flags.interval];
  const logFile = join(dir, `${p.name}-${server}.log`);
  const child =
    server === 'webhook'
      ? await spawnWebhook({
          certs,
          logFile,
          logLevel: flags['log-level'],
          nodeArgs: [...(flags['node-args'] ? flags['node-args'].split(' ') : []), ...prof],
        })
      : await spawnBaseline({
          certs,
          logFile,
          script: join(here, server === 'node' ? 'baseline-server.js' : 'fastify-server.js'),
          args: server === 'defaults' ? ['--defaults'] : [],
          nodeArgs: prof,
        });
  let from: number;
  let to: number;
  let requests: number;
  let cpuMs: number;
  try {
    await loadFor(child, p, ca, { seconds: 1, connections: Number(flags.connections) });
    const cpu0 = cpuMsOf(child.pid);
    from = Number(process.hrtime.bigint() / 1000n);
    const result = await loadFor(child, p, ca, {
      seconds: Number(flags.duration),
      connections: Number(flags.connections),
    });
    to = Number(process.hrtime.bigint() / 1000n);
    cpuMs = cpuMsOf(child.pid) - cpu0;
    requests = result.requests.total ?? 0;
    if (result.errors + result.non2xx + result.mismatches + result.timeouts > 0)
      throw new Error(`${server} ${p.name}: failed requests`);
  } finally {
    await child.stop();
  }
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile written in ${profDir}`);
  const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as CpuProfile;
  return {
    server,
    payload: p.name,
    requests,
    cpuUsPerReview: Math.round((cpuMs * 1000) / Math.max(1, requests)),
    buckets: bucketProfile(profile, from, to),
  };
}

async function main() {
  const selected = flags.payloads?.split(',');
  const payloads = benchPayloads().filter((p) => !selected || selected.includes(p.name));
  const servers = flags.servers.split(',');
  const tmp = await tempDir('bench-profile-');
  const dir = flags.keep ?? tmp.path;
  try {
    const certs = await makeCerts(join(tmp.path, 'certs'));
    const ca = readFileSync(certs.ca, 'utf8');
    console.log(`load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    for (const p of payloads) {
      const measured: Measured[] = [];
      for (const s of servers) measured.push(await profileOne(s, p, certs, ca, dir));
      console.log(
        `\n${p.name}: main-thread µs per review by bucket (share of the non-idle samples); ` +
          measured
            .map((m) => `${m.server} ${m.requests} reviews, ${m.cpuUsPerReview} µs CPU each`)
            .join('; '),
      );
      console.log(`| bucket | ${measured.map((m) => m.server).join(' | ')} |`);
      console.log(`|---|${measured.map(() => '---:').join('|')}|`);
      const cell = (m: Measured, us: number) =>
        `${(us / m.requests).toFixed(1)} (${((100 * us) / m.buckets.totalUs).toFixed(0)} %)`;
      for (const b of BUCKETS) {
        if (measured.every((m) => m.buckets.us[b] === 0)) continue;
        console.log(`| ${b} | ${measured.map((m) => cell(m, m.buckets.us[b])).join(' | ')} |`);
      }
      console.log(
        `| **total** | ${measured.map((m) => `**${(m.buckets.totalUs / m.requests).toFixed(1)}**`).join(' | ')} |`,
      );
    }
    console.log(`\nload ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  } finally {
    if (!flags.keep) await tmp.remove();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
