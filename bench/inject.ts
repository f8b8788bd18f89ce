/**
 * `npm run bench:inject`: what the webhook adds to a review over bare
 * Fastify, without TLS, sockets or a load generator: each app answers the
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
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type PinoModule from 'pino';
import type * as PromClient from 'prom-client';
import type * as AppModule from '../src/http/app.js';
import type * as MetricsModule from '../src/http/metrics.js';
import type * as StaticModule from '../src/cluster/static-source.js';
import type * as NetworksModule from '../src/rules/networks.js';
import type * as InputsModule from '../src/inputs/rule-inputs.js';
import { bareFastifyApp } from './lib/bare-fastify.js';
import { repoRoot, SERVICE_CIDRS } from './lib/servers.js';
import { benchPayloads } from './payloads.js';

const { values: flags } = parseArgs({
  options: {
    batches: { type: 'string', default: '15' },
    'per-batch': { type: 'string', default: '300' },
    payloads: { type: 'string' },
    variant: { type: 'string', multiple: true, default: [] },
    'log-level': { type: 'string', default: 'info' },
  },
});

async function webhookApp(root: string): Promise<FastifyInstance> {
  const load = async <T>(relative: string) =>
    (await import(pathToFileURL(join(root, 'dist', relative)).href)) as T;
  const { buildApp } = await load<typeof AppModule>('http/app.js');
  const { createServerMetrics } = await load<typeof MetricsModule>('http/metrics.js');
  const { staticSources } = await load<typeof StaticModule>('cluster/static-source.js');
  const { ServiceRanges } = await load<typeof NetworksModule>('rules/networks.js');
  const pino = (await import(pathToFileURL(join(root, 'node_modules', 'pino', 'pino.js')).href)) as {
    default: typeof PinoModule;
  };
  const { Registry } = (await import(
    pathToFileURL(join(root, 'node_modules', 'prom-client', 'index.js')).href
  )) as typeof PromClient;
  const parsed = ServiceRanges.parse(SERVICE_CIDRS.split(','));
  if (!parsed.ok) throw new Error(parsed.error);
  const logger = pino.default(
    { level: flags['log-level'], base: { app: 'routability-webhook' } },
    pino.default.destination({ dest: '/dev/null', sync: true }),
  );
  const config = {
    serviceCidrs: SERVICE_CIDRS.split(','),
    clusterDomain: 'cluster.local',
    allowedRoutability: undefined,
    specPolicy: 'enforce',
    statusPolicy: 'warn',
    gepRevision: 'provisional',
    maxBodyBytes: 7 * 1024 * 1024,
  } as const;
  const sources = staticSources(parsed.ranges, 'flags');
  const { ruleInputs } = await load<typeof InputsModule>('inputs/rule-inputs.js');
  return buildApp({
    config,
    logger,
    inputs: ruleInputs({ settings: config, sources }),
    metrics: createServerMetrics(new Registry()),
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const apps = new Map<string, FastifyInstance>();
  apps.set('webhook', await webhookApp(repoRoot()));
  for (const v of flags.variant ?? []) {
    const at = v.indexOf('=');
    apps.set(v.slice(0, at), await webhookApp(v.slice(at + 1)));
  }
  apps.set('bare Fastify', bareFastifyApp());
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
    console.log(`\n${p.name}: CPU µs per review through inject() (median of ${flags.batches} batches)`);
    for (const [name, xs] of cpu)
      console.log(
        `  ${name.padEnd(14)} ${median(xs).toFixed(1).padStart(7)} µs` +
          (name === 'bare Fastify' ? '' : `  adds ${(median(xs) - bare).toFixed(1)} µs over bare Fastify`),
      );
  }
  for (const app of apps.values()) await app.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
