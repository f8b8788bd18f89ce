/**
 * The webhook's Fastify app built in this process from a build's `dist/` (the
 * repository's own, or another build's for a before/after comparison), as
 * `serve` builds it: the flags' service ranges, a prom-client registry of its
 * own and pino writing synchronously to /dev/null. For benchmarks that answer
 * through `inject()` (bench:inject, bench:count).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type PinoModule from 'pino';
import type * as PromClient from 'prom-client';
import type * as AppModule from '../../src/http/app.js';
import type * as MetricsModule from '../../src/http/metrics.js';
import type * as StaticModule from '../../src/cluster/static-source.js';
import type * as NetworksModule from '../../src/rules/networks.js';
import type * as InputsModule from '../../src/inputs/rule-inputs.js';
import { SERVICE_CIDRS } from './servers.js';

/** `root` holds the build's dist/ and node_modules/. */
export async function webhookApp(root: string, logLevel: string): Promise<FastifyInstance> {
  const load = async <T>(relative: string) =>
    (await import(pathToFileURL(join(root, 'dist', relative)).href)) as T;
  const { buildApp } = await load<typeof AppModule>('http/app.js');
  const { createServerMetrics } = await load<typeof MetricsModule>('http/metrics.js');
  const { staticSources } = await load<typeof StaticModule>('cluster/static-source.js');
  const { ServiceRanges } = await load<typeof NetworksModule>('rules/networks.js');
  const { ruleInputs } = await load<typeof InputsModule>('inputs/rule-inputs.js');
  const pino = (await import(pathToFileURL(join(root, 'node_modules', 'pino', 'pino.js')).href)) as {
    default: typeof PinoModule;
  };
  const { Registry } = (await import(
    pathToFileURL(join(root, 'node_modules', 'prom-client', 'index.js')).href
  )) as typeof PromClient;
  const parsed = ServiceRanges.parse(SERVICE_CIDRS.split(','));
  if (!parsed.ok) throw new Error(parsed.error);
  const logger = pino.default(
    { level: logLevel, base: { app: 'routability-webhook' } },
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
  return buildApp({
    config,
    logger,
    inputs: ruleInputs({ settings: config, sources }),
    metrics: createServerMetrics(new Registry()),
  });
}
