/**
 * Assembles and starts the server from its configuration: certificates →
 * service-range sources and the GEP-5093 revision source → the HTTPS app and the health app → listen, and
 * returns the handle that shuts it all down. Composition only: nothing here
 * decides anything about Gateways.
 */
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { selectRevisionSource } from '../inputs/revision/crd-revision-source.js';
import { devIgnoredKubeconfig } from '../kube/dev-kubeconfig.js';
import { selectClusterSources } from '../inputs/ranges/select.js';
import type { ServeConfig } from '../config/serve.js';
import { startServerAudit, type ServerAudit } from '../audit/server.js';
import { ruleInputs, type RuleInputs } from '../inputs/rule-inputs.js';
import { buildApp } from '../http/app.js';
import { createCaps } from '../http/caps.js';
import { buildHealthApp } from '../http/health.js';
import { createServerMetrics } from '../http/metrics.js';
import { loadTlsMaterial } from '../http/tls.js';
import { startPolicyParams } from './policy-params.js';
import type { HealthComponent } from '../readiness.js';
import {
  certificateComponent,
  followCertificates,
  httpsOptions,
  servingCertificateFiles,
} from './certificates.js';

export interface ServerHandle {
  readonly port: number;
  readonly healthPort: number;
  /** Readiness false, stop accepting, finish in-flight requests, release everything. */
  close(): Promise<void>;
}

interface Listener {
  listen(opts: { port: number; host: string }): Promise<string>;
  readonly server: { address(): AddressInfo | string | null };
}

function errorCode(err: unknown): unknown {
  return typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
}

/** Listens on all interfaces, IPv6 and IPv4 where the kernel has IPv6, else IPv4 only; returns the bound port. */
async function listenAnywhere(app: Listener, port: number): Promise<number> {
  try {
    await app.listen({ port, host: '::' });
  } catch (err) {
    const code = errorCode(err);
    if (code !== 'EAFNOSUPPORT' && code !== 'EADDRNOTAVAIL') throw err;
    await app.listen({ port, host: '0.0.0.0' });
  }
  const address = app.server.address();
  return typeof address === 'object' && address !== null ? address.port : port;
}

/** Shutting down: not ready, so that endpoints drop this replica while it finishes its requests. */
function shutdownComponent(closing: () => boolean): HealthComponent {
  return {
    name: 'shutdown',
    check: () => (closing() ? { ok: false, reason: 'shutting down' } : { ok: true }),
  };
}

/** Every part with a say in readiness, in the order /readyz lists them; a new source adds its own here. */
function healthComponents(
  closing: () => boolean,
  certificates: HealthComponent,
  parts: {
    inputs: RuleInputs;
    audit: ServerAudit;
    policyParams: { describe(): Readonly<Record<string, unknown>> } | undefined;
  },
): HealthComponent[] {
  const { components } = parts.inputs;
  return [
    shutdownComponent(closing),
    certificates,
    components.serviceRanges,
    components.allocatedIPs,
    { name: 'audit', detail: { key: 'audit', describe: () => parts.audit.describe() } },
    ...(components.gepRevision ? [components.gepRevision] : []),
    ...(parts.policyParams
      ? [{ name: 'policyParams', detail: { key: 'policyParams', describe: parts.policyParams.describe } }]
      : []),
  ];
}

/**
 * The background work: the audit, judging stored Gateways with the context
 * admission uses, and the policy params kept in step by the audit's leader.
 */
async function startBackground(
  config: ServeConfig,
  logger: Logger,
  registry: Registry,
  started: { inputs: RuleInputs; noCluster: string | undefined },
) {
  const { inputs, noCluster } = started;
  const audit = await startServerAudit({
    intervalMs: config.auditIntervalMs,
    leaseName: config.auditLease,
    lease: { durationMs: config.auditLeaseDurationMs, renewEveryMs: config.auditLeaseRetryPeriodMs },
    reports: config.auditReports,
    kubeconfig: config.kubeconfig,
    noCluster,
    logger,
    registry,
    inputs,
  });
  const policyParams = await startPolicyParams({ config, logger, registry, inputs, audit, noCluster });
  return {
    audit,
    policyParams,
    /** The params first (no write once shutting down), then the audit and its Lease. */
    stop: () => {
      policyParams?.stop();
      return audit.stop();
    },
  };
}

/**
 * The service ranges and the GEP-5093 revision in force (--gep-revision, or
 * the cluster's Gateway CRD with auto); with --dev, an unusable kubeconfig is
 * no cluster for both (noCluster says why).
 */
async function ruleInputSources(config: ServeConfig, logger: Logger, registry: Registry) {
  const noCluster = config.dev
    ? await devIgnoredKubeconfig({ kubeconfig: config.kubeconfig }, logger)
    : undefined;
  const sources = await selectClusterSources({ config, logger, registry, noCluster });
  const revision = await selectRevisionSource({
    setting: config.gepRevision,
    logger,
    registry,
    kubeconfigOptions: { kubeconfig: config.kubeconfig },
    noCluster,
  });
  return { inputs: ruleInputs({ settings: config, sources, revision }), revision, noCluster };
}

export async function startServer(config: ServeConfig, logger: Logger): Promise<ServerHandle> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = createServerMetrics(registry);

  const files = await servingCertificateFiles(config, logger);
  const material = await loadTlsMaterial(files);
  const { inputs, revision, noCluster } = await ruleInputSources(config, logger, registry);
  const background = await startBackground(config, logger, registry, { inputs, noCluster });
  let closing = false;
  const isClosing = () => closing;
  const caps = createCaps(config, registry, logger);
  const app = buildApp({
    config,
    logger,
    inputs,
    metrics,
    https: httpsOptions(material),
    closing: isClosing,
    bodyBudget: caps.bodyBudget,
  });
  caps.guard(app.server);
  const certificates = followCertificates({ files, material, listener: app.server }, metrics, logger);
  const health = buildHealthApp({
    registry,
    components: healthComponents(isClosing, certificateComponent(certificates), { inputs, ...background }),
  });

  let ports: { port: number; healthPort: number };
  try {
    ports = {
      port: await listenAnywhere(app, config.port),
      healthPort: await listenAnywhere(health, config.healthPort),
    };
  } catch (err) {
    certificates.stop();
    await Promise.allSettled([app.close(), health.close(), background.stop(), inputs.close()]);
    throw err;
  }
  logger.info(
    {
      ...ports,
      mtls: Boolean(files.clientCaFile),
      certificateNotAfter: material.notAfter.toISOString(),
      // null while auto has not read the Gateway CRD yet; its own line follows when it has.
      gepRevision: revision.current() ?? null,
    },
    'listening',
  );

  return {
    ...ports,
    close: async () => {
      closing = true;
      certificates.stop();
      // The audit's lease is released while requests finish, not after: within the shutdown timeout.
      const auditStopped = background.stop();
      // Fastify's close stops accepting, closes idle keep-alive connections and
      // waits for in-flight requests; responses meanwhile carry Connection: close.
      await app.close();
      await health.close();
      await auditStopped;
      await inputs.close();
    },
  };
}
