/**
 * Composition only: config → logger → sources → app → listen → shutdown.
 * Nothing here decides anything about Gateways.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server as TlsServer } from 'node:tls';
import pino, { type Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { flagSources } from './cluster/flag-source.js';
import type { SelectDeps } from './cluster/select.js';
import type { ClusterSources } from './cluster/types.js';
import type { ServeConfig } from './config/serve.js';
import { buildApp } from './http/app.js';
import { buildHealthApp } from './http/health.js';
import { createServerMetrics } from './http/metrics.js';
import {
  loadTlsMaterial,
  TLS_POLICY,
  watchCertificates,
  type TlsFiles,
  type TlsMaterial,
} from './http/tls.js';

export interface ServerHandle {
  readonly port: number;
  readonly healthPort: number;
  /** Readiness false, stop accepting, finish in-flight requests, release everything. */
  close(): Promise<void>;
}

export function createLogger(config: Pick<ServeConfig, 'logLevel' | 'dev'>): Logger {
  const options = { level: config.logLevel, base: { app: 'routability-webhook' } };
  if (config.dev)
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss' } },
    });
  // Synchronous writes on the main thread, on purpose. pino's default destination
  // hands each line to libuv's thread pool (a pool-thread write plus an eventfd
  // wake-up per review); batching (minLength) held start-up lines back and gained
  // nothing measurable (docs/benchmarks.md). Sync, a line never trails its answer.
  return pino(options, pino.destination({ dest: 1, sync: true }));
}

/** `serve --dev`: use the folder's certificates, generating them once when missing. */
async function devCertificates(certDir: string, logger: Logger): Promise<TlsFiles> {
  const files = { certFile: join(certDir, 'tls.crt'), keyFile: join(certDir, 'tls.key') };
  if (existsSync(files.certFile) && existsSync(files.keyFile)) return files;
  const { generateCertificates } = await import('./certs/generate.js');
  const { writeCertificateFiles } = await import('./certs/write.js');
  const generated = await generateCertificates({
    service: 'gateway-routability-webhook',
    namespace: 'default',
  });
  await writeCertificateFiles(certDir, generated, { caKey: false });
  logger.info(
    { certDir, sans: [...generated.dnsNames, ...generated.ipAddresses] },
    'generated dev certificates',
  );
  return files;
}

function httpsOptions(material: TlsMaterial) {
  return {
    key: material.key,
    cert: material.cert,
    ...(material.ca ? { ca: material.ca, requestCert: true, rejectUnauthorized: true } : {}),
  };
}

/** Listens on all interfaces, IPv6 and IPv4 where the kernel has IPv6, else IPv4 only. */
async function listenAnywhere(
  app: { listen(opts: { port: number; host: string }): Promise<string> },
  port: number,
) {
  try {
    await app.listen({ port, host: '::' });
  } catch (err) {
    if (
      (err as NodeJS.ErrnoException).code !== 'EAFNOSUPPORT' &&
      (err as NodeJS.ErrnoException).code !== 'EADDRNOTAVAIL'
    )
      throw err;
    await app.listen({ port, host: '0.0.0.0' });
  }
}

/**
 * The cluster modules pull in @kubernetes/client-node, whose import alone takes
 * 0.5–1.5 s on a 2-core node: with --service-cidr (and no --check-allocated-ips)
 * nothing of it is used, so it is loaded only when a cluster source is needed.
 */
async function clusterSources(deps: SelectDeps): Promise<ClusterSources> {
  const { config, logger, registry } = deps;
  if (config.serviceRanges === undefined || config.checkAllocatedIps === true)
    return (await import('./cluster/select.js')).selectClusterSources(deps);
  return flagSources(config.serviceRanges, logger.child({ component: 'cluster' }), registry);
}

export async function startServer(config: ServeConfig, logger: Logger): Promise<ServerHandle> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = createServerMetrics(registry);

  const files: TlsFiles =
    config.tlsCertFile && config.tlsPrivateKeyFile
      ? { certFile: config.tlsCertFile, keyFile: config.tlsPrivateKeyFile, clientCaFile: config.clientCaFile }
      : { ...(await devCertificates(config.certDir, logger)), clientCaFile: config.clientCaFile };
  const material = await loadTlsMaterial(files);
  metrics.certificateExpiry.set(material.notAfter.getTime() / 1000);

  const sources = await clusterSources({ config, logger, registry });
  let closing = false;
  const app = buildApp({
    config,
    logger,
    sources,
    metrics,
    https: httpsOptions(material),
    closing: () => closing,
  });
  const certificates = watchCertificates(
    files,
    material,
    (next) => {
      (app.server as unknown as TlsServer).setSecureContext({ ...httpsOptions(next), ...TLS_POLICY });
      metrics.certificateExpiry.set(next.notAfter.getTime() / 1000);
    },
    logger,
  );

  const health = buildHealthApp({
    registry,
    checks: [
      { name: 'shutdown', check: () => (closing ? { ok: false, reason: 'shutting down' } : { ok: true }) },
      {
        name: 'certificate',
        check: () =>
          certificates.current().notAfter.getTime() > Date.now()
            ? { ok: true }
            : {
                ok: false,
                reason: `serving certificate expired at ${certificates.current().notAfter.toISOString()}`,
              },
      },
      {
        name: 'service-ranges',
        check: () => {
          const r = sources.ranges.readiness();
          return { ok: r.ready, reason: r.reason };
        },
      },
    ],
    detail: () => ({
      serviceRanges: sources.ranges.describe(),
      certificate: {
        subject: certificates.current().subject,
        notAfter: certificates.current().notAfter.toISOString(),
      },
      allocatedIPs: sources.allocatedIPs ? (sources.allocatedIPs.ready() ? 'synced' : 'syncing') : 'off',
    }),
  });

  try {
    await listenAnywhere(app, config.port);
    await listenAnywhere(health, config.healthPort);
  } catch (err) {
    certificates.stop();
    await Promise.allSettled([app.close(), health.close(), sources.close()]);
    throw err;
  }
  const port = (app.server.address() as AddressInfo).port;
  const healthPort = (health.server.address() as AddressInfo).port;
  logger.info(
    {
      port,
      healthPort,
      mtls: Boolean(files.clientCaFile),
      certificateNotAfter: material.notAfter.toISOString(),
    },
    'listening',
  );

  return {
    port,
    healthPort,
    close: async () => {
      closing = true;
      certificates.stop();
      // Fastify's close stops accepting, closes idle keep-alive connections and
      // waits for in-flight requests; responses meanwhile carry Connection: close.
      await app.close();
      await health.close();
      await sources.close();
    },
  };
}
