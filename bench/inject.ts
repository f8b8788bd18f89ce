/**
 * `npm run bench -- inject`: what the webhook adds to a review over bare
 * Fastify (the project's transport options and body reader) and over Fastify
 * with its defaults, without TLS, sockets or a load generator: each app answers the
 * payloads through Fastify's `inject()` in this process, in short batches
 * that alternate between the apps, and each batch is timed in CPU time
 * (process.cpuUsage), which other work on the machine disturbs far less than
 * wall time. The figure is the median over the batches, in µs per review.
 * The webhook logs as `serve` does: synchronous writes, here to /dev/null.
 *
 * Flags: --batches N (15), --per-batch N (300), --payloads a,b,
 * --variant NAME=ROOT (repeatable: another build, ROOT holding its dist/ and
 * node_modules/), --log-level L (info).
 */
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { bareFastifyApp, defaultsFastifyApp } from './lib/bare-fastify.js';
import { repoRoot } from '../test/kit/server-process.js';
import { webhookApp } from './lib/webhook-app.js';
import { benchPayloads } from '../test/kit/payloads.js';

const { values: flags } = parseArgs({
  options: {
    batches: { type: 'string', default: '15' },
    'per-batch': { type: 'string', default: '300' },
    payloads: { type: 'string' },
    variant: { type: 'string', multiple: true, default: [] },
    'log-level': { type: 'string', default: 'info' },
  },
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const apps = new Map<string, FastifyInstance>();
  apps.set('webhook', await webhookApp(repoRoot(), flags['log-level']));
  for (const v of flags.variant ?? []) {
    const at = v.indexOf('=');
    apps.set(v.slice(0, at), await webhookApp(v.slice(at + 1), flags['log-level']));
  }
  apps.set('bare Fastify', bareFastifyApp());
  apps.set('Fastify defaults', defaultsFastifyApp());
  const selected = flags.payloads?.split(',');
  const payloads = benchPayloads().filter((p) => !selected || selected.includes(p.name));
  const perBatch = Number(flags['per-batch']);
  console.log(`load ${(await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim()}`);
  for (const p of payloads) {
    const inject = (app: FastifyInstance) =>
      app.inject({
        method: 'POST',
        url: `${p.path}?timeout=10s`,
        headers: { 'content-type': 'application/json' },
        payload: p.body,
      });
    const cpu = new Map<string, number[]>([...apps.keys()].map((k) => [k, []]));
    for (const app of apps.values()) for (let i = 0; i < 200; i++) await inject(app);
    const names = [...apps.keys()];
    for (let b = 0; b < Number(flags.batches); b++)
      for (let k = 0; k < names.length; k++) {
        const name = names[(b + k) % names.length]!;
        const app = apps.get(name)!;
        const start = process.cpuUsage();
        for (let i = 0; i < perBatch; i++) {
          const res = await inject(app);
          if (res.statusCode !== 200) throw new Error(`${name} ${p.name}: HTTP ${res.statusCode}`);
        }
        const used = process.cpuUsage(start);
        cpu.get(name)!.push((used.user + used.system) / perBatch);
      }
    const bare = median(cpu.get('bare Fastify')!);
    const defaults = median(cpu.get('Fastify defaults')!);
    console.log(`\n${p.name}: CPU µs per review through inject() (median of ${flags.batches} batches)`);
    for (const [name, xs] of cpu) {
      const m = median(xs);
      const over = (base: number, what: string) => `  adds ${(m - base).toFixed(1)} µs over ${what}`;
      console.log(
        `  ${name.padEnd(16)} ${m.toFixed(1).padStart(7)} µs` +
          (name === 'Fastify defaults' ? '' : over(defaults, 'Fastify defaults')) +
          (name === 'bare Fastify' || name === 'Fastify defaults' ? '' : over(bare, 'bare Fastify')),
      );
    }
  }
  for (const app of apps.values()) await app.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
