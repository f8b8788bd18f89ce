/** Shared helpers for the cluster tests: config, a capturing logger, decisions through the real engine. */
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { Registry } from 'prom-client';
import { ruleContext } from '../../src/config/rule-settings.js';
import { parseServeConfig, type ServeConfig } from '../../src/config/serve.js';
import { allocationPrefetch } from '../../src/inputs/allocations/allocation-prefetch.js';
import type { Requester } from '../../src/inputs/allocations/ip-lookup-slots.js';
import { selectClusterSources, type SelectDeps } from '../../src/inputs/ranges/select.js';
import { startGatewayCrdRevisionWatch, type RevisionSource } from '../../src/inputs/revision/crd-revision.js';
import type { ClusterSources } from '../../src/inputs/ranges/types.js';
import { validateGateway, type ValidationResult } from '../../src/rules/index.js';
import { clusterMetrics } from '../../src/inputs/ranges/metrics.js';
import { kubeClient } from '../../src/kube/client.js';
import { loadKubeconfig } from '../../src/kube/kubeconfig.js';
import { startResourceWatch, type BackoffOptions, type ResourceWatch } from '../../src/kube/watch.js';
import { eventually as waitUntil } from './eventually.js';

export const FAST_BACKOFF = {
  initialMs: 20,
  maxMs: 200,
  resetAfterMs: 10_000,
  absentRetryMs: 60_000,
  listTimeoutMs: 5_000,
};

export function serveConfig(args: readonly string[]): ServeConfig {
  const parsed = parseServeConfig(
    ['--tls-cert-file', 'unused.crt', '--tls-private-key-file', 'unused.key', ...args],
    {},
  );
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export function capturingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString('utf8').split('\n'))
        if (text.trim()) lines.push(JSON.parse(text) as LogLine);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

export interface Harness {
  sources: ClusterSources;
  registry: Registry;
  lines: LogLine[];
  config: ServeConfig;
}

export async function startSources(
  args: readonly string[],
  extra: { env?: Record<string, string | undefined>; home?: string; lookup?: SelectDeps['lookup'] } = {},
): Promise<Harness> {
  const { logger, lines } = capturingLogger();
  const registry = new Registry();
  const config = serveConfig(args);
  const sources = await selectClusterSources({
    config,
    logger,
    registry,
    kubeconfigOptions: {
      env: extra.env ?? {},
      ...(extra.home !== undefined ? { home: extra.home } : { home: '/nonexistent-home' }),
      serviceAccountTokenFile: '/nonexistent/token',
    },
    backoff: FAST_BACKOFF,
    ...(extra.lookup ? { lookup: extra.lookup } : {}),
  });
  return { sources, registry, lines, config };
}

export interface CrdWatchHarness {
  source: RevisionSource;
  lines: LogLine[];
  registry: Registry;
  /** The kubeconfig's description, as the watch's messages name the cluster. */
  description: string;
}

/** The Gateway CRD revision watch against the cluster of `kubeconfig` (the fake API server's). */
export function startCrdRevisionWatch(
  kubeconfig: string,
  backoff: Partial<BackoffOptions> = FAST_BACKOFF,
): CrdWatchHarness {
  const { logger, lines } = capturingLogger();
  const registry = new Registry();
  const loaded = loadKubeconfig({ kubeconfig, env: {} });
  const source = startGatewayCrdRevisionWatch({
    client: kubeClient(loaded.kc),
    description: loaded.description,
    logger,
    registry,
    backoff,
  });
  return { source, lines, registry, description: loaded.description };
}

/** The kit's wait-until (eventually.ts) at this folder's pace: polled every 1 ms, 5 s by default. */
export async function eventually(predicate: () => boolean, what: string, ms = 5000): Promise<void> {
  await waitUntil(predicate, what, ms, 1);
}

function gatewayCreate(value: string, routability: string, gateway: { namespace: string; name: string }) {
  const object = {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: gateway,
    spec: {
      gatewayClassName: 'example',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
      addresses: [{ type: 'IPAddress', value, routability }],
    },
  };
  return { operation: 'CREATE', namespace: gateway.namespace, name: gateway.name, object };
}

function rangesOf(h: Harness) {
  const ranges = h.sources.ranges.current();
  if (!ranges) throw new Error(`no ranges: ${h.sources.ranges.readiness().reason}`);
  return ranges;
}

/** A CREATE of a Gateway requesting one address, decided by the real engine with the live ranges (no allocations). */
export function decide(
  h: Harness,
  value: string,
  routability = 'Cluster',
  gateway: { namespace: string; name: string } = { namespace: 'default', name: 'gw' },
): ValidationResult {
  return validateGateway(gatewayCreate(value, routability, gateway), ruleContext(h.config, rangesOf(h)));
}

/** As decide, with the allocated-IP lookups the server makes (when the check is on). */
export async function decideWithAllocations(
  h: Harness,
  value: string,
  routability = 'Cluster',
  gateway: { namespace: string; name: string } = { namespace: 'default', name: 'gw' },
  /** Who sends the review (its lookups get this requester's share); absent: nobody in particular. */
  requester?: Requester,
): Promise<ValidationResult> {
  const request = gatewayCreate(value, routability, gateway);
  const ctx = ruleContext(h.config, rangesOf(h));
  const source = h.sources.allocatedIPs;
  if (!source) return validateGateway(request, ctx);
  return allocationPrefetch(source).decide(
    ctx,
    (c) => validateGateway(request, c),
    () => requester,
  );
}

/** A bare ServiceCIDR watch over the fake's kubeconfig, with a capturing logger and its own registry. */
export function startServiceCidrWatch(
  kubeconfigPath: string,
  backoff: Partial<BackoffOptions>,
): {
  watch: ResourceWatch<{ metadata?: { name?: string } }>;
  lines: LogLine[];
  registry: Registry;
} {
  const { logger, lines } = capturingLogger();
  const registry = new Registry();
  const kc = loadKubeconfig({ kubeconfig: kubeconfigPath, env: {} }).kc;
  const watch = startResourceWatch<{ metadata?: { name?: string } }>({
    client: kubeClient(kc),
    group: 'networking.k8s.io',
    resource: 'servicecidrs',
    versions: ['v1'],
    onChange: () => {},
    logger,
    metrics: clusterMetrics(registry),
    backoff,
  });
  return { watch, lines, registry };
}
