/**
 * Assembles and starts the server from its configuration, in this order: the
 * serving certificate → the rule inputs (inputs/start.ts: ranges, allocated
 * IPs, revision) → the audit Lease (lease.ts) → the audit and the policy
 * params, both led by that Lease → the HTTPS app and the health app → listen;
 * and returns the handle that shuts it all down. Composition only: nothing
 * here decides anything about Gateways.
 */
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { ServeConfig } from '../config/serve.js';
import { startServerAudit, type ServerAudit } from '../audit/server.js';
import type { RuleInputs } from '../inputs/rule-inputs.js';
import { startRuleInputs } from '../inputs/start.js';
import { buildApp } from '../http/app.js';
import { createCaps } from '../http/caps.js';
import { buildHealthApp } from '../http/health.js';
import { createServerMetrics } from '../http/metrics.js';
import { loadTlsMaterial } from '../http/tls.js';
import type { LeaderElector } from '../kube/lease.js';
import { startAuditLease } from './lease.js';
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

interface BackgroundParts {
  readonly config: ServeConfig;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly inputs: RuleInputs;
  /** The audit Lease (lease.ts); undefined with the audit off or no credentials. */
  readonly lease: LeaderElector | undefined;
  /** Set when --dev ignored an unusable kubeconfig. */
  readonly noCluster: string | undefined;
}

/**
 * The background work, both led by the one audit Lease: the audit, judging
 * stored Gateways with the context admission uses, and the policy params.
 */
async function startBackground(parts: BackgroundParts) {
  const { config, logger, registry, inputs, lease, noCluster } = parts;
  const audit = await startServerAudit({
    intervalMs: config.auditIntervalMs,
    leadership: lease,
    reports: config.auditReports,
    kubeconfig: config.kubeconfig,
    noCluster,
    logger,
    registry,
    inputs,
  });
  const policyParams = await startPolicyParams({
    config,
    logger,
    registry,
    inputs,
    leadership: lease,
    noCluster,
  });
  return {
    audit,
    policyParams,
    /** The params first (no write once shutting down), then the audit and the Lease, released at once. */
    stop: async () => {
      policyParams?.stop();
      await Promise.all([audit.stop(), lease?.stop()]);
    },
  };
}

export async function startServer(config: ServeConfig, logger: Logger): Promise<ServerHandle> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = createServerMetrics(registry);

  const files = await servingCertificateFiles(config, logger);
  const material = await loadTlsMaterial(files);
  const { inputs, revision, noCluster } = await startRuleInputs(config, logger, registry);
  const lease = await startAuditLease({ config, logger, noCluster });
  const background = await startBackground({ config, logger, registry, inputs, lease, noCluster });
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
      // The audit Lease is released while requests finish, not after: within the shutdown timeout.
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
