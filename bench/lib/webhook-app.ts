/**
 * The webhook's Fastify app built in this process from a build's `dist/` (the
 * repository's own, or another build's for a before/after comparison), as
 * `serve` builds it: the flags' service ranges, a prom-client registry of its
 * own and pino writing synchronously to /dev/null. For benchmarks that answer
 * through `inject()` (`npm run bench -- inject`, `npm run bench -- count`).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type PinoModule from 'pino';
import type * as PromClient from 'prom-client';
import type * as AppModule from '../../src/http/app.js';
import type * as MetricsModule from '../../src/http/metrics.js';
import type * as StaticModule from '../../src/inputs/ranges/static-source.js';
import type * as NetworksModule from '../../src/rules/networks.js';
import type * as InputsModule from '../../src/inputs/rule-inputs.js';
import { SERVICE_CIDRS } from '../../test/kit/server-process.js';

/** The flags' settings as `serve --service-cidr …` reads them (also the engine benchmark's). */
export const CONFIG = {
  serviceCidrs: SERVICE_CIDRS.split(','),
  clusterDomain: 'cluster.local',
  allowedRoutability: undefined,
  specPolicy: 'enforce',
  statusPolicy: 'warn',
  gepRevision: 'provisional',
  maxBodyBytes: 7 * 1024 * 1024,
} as const;

/** What `serve` hands buildApp, built from a build's dist/: settings, logger, rule inputs, metrics. */
export interface WebhookParts {
  readonly config: typeof CONFIG;
  readonly logger: PinoModule.Logger;
  readonly inputs: ReturnType<typeof InputsModule.ruleInputs>;
  readonly metrics: ReturnType<typeof MetricsModule.createServerMetrics>;
  /** Imports a module of the build's dist/ (path relative to dist/). */
  readonly load: <T>(relative: string) => Promise<T>;
}

/** `root` holds the build's dist/ and node_modules/. */
export async function webhookParts(root: string, logLevel: string): Promise<WebhookParts> {
  const load = async <T>(relative: string) =>
    (await import(pathToFileURL(join(root, 'dist', relative)).href)) as T;
  const { createServerMetrics } = await load<typeof MetricsModule>('http/metrics.js');
  // A build from before issue 40 (a before/after comparison) has it under cluster/.
  const { staticSources } = await load<typeof StaticModule>('inputs/ranges/static-source.js').catch(() =>
    load<typeof StaticModule>('cluster/static-source.js'),
  );
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
  const sources = staticSources(parsed.ranges, 'flags');
  return {
    config: CONFIG,
    logger,
    inputs: ruleInputs({ settings: CONFIG, sources }),
    metrics: createServerMetrics(new Registry()),
    load,
  };
}

/** The webhook's Fastify app as `serve` builds it, from a build's dist/. */
export async function webhookApp(root: string, logLevel: string): Promise<FastifyInstance> {
  const parts = await webhookParts(root, logLevel);
  const { buildApp } = await parts.load<typeof AppModule>('http/app.js');
  return buildApp({
    config: parts.config,
    logger: parts.logger,
    inputs: parts.inputs,
    metrics: parts.metrics,
  });
}
