/**
 * The serving certificate as a part of the server: which files (the flags',
 * or --dev's generated ones), the TLS options they give, following their
 * changes into the listening server and the expiry metric, and the
 * certificate's say in readiness.
 */
import { existsSync } from 'node:fs';
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import { join } from 'node:path';
import { Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import type { ServeConfig } from '../config/serve.js';
import type { ServerMetrics } from '../http/metrics.js';
import { rateLimitedWarn } from '../http/rate-limited-log.js';
import {
  clientNameGate,
  TLS_POLICY,
  watchCertificates,
  type CertificateWatcher,
  type TlsFiles,
  type TlsMaterial,
} from '../http/tls.js';
import type { HealthComponent } from '../readiness.js';

/** `serve --dev`: use the folder's certificates, generating them once when missing. */
async function devCertificates(certDir: string, logger: Logger): Promise<TlsFiles> {
  const files = { certFile: join(certDir, 'tls.crt'), keyFile: join(certDir, 'tls.key') };
  if (existsSync(files.certFile) && existsSync(files.keyFile)) return files;
  const { generateCertificates } = await import('../certs/generate.js');
  const { writeCertificateFiles } = await import('../certs/write.js');
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

/** The files to serve from: --tls-cert-file and --tls-private-key-file, else --dev's. */
export async function servingCertificateFiles(
  config: Pick<
    ServeConfig,
    'tlsCertFile' | 'tlsPrivateKeyFile' | 'clientCaFile' | 'clientAllowedNames' | 'certDir'
  >,
  logger: Logger,
): Promise<TlsFiles> {
  const client = { clientCaFile: config.clientCaFile, clientAllowedNames: config.clientAllowedNames };
  if (config.tlsCertFile && config.tlsPrivateKeyFile)
    return { certFile: config.tlsCertFile, keyFile: config.tlsPrivateKeyFile, ...client };
  return { ...(await devCertificates(config.certDir, logger)), ...client };
}

export function httpsOptions(material: TlsMaterial): HttpsServerOptions {
  return {
    key: material.key,
    cert: material.cert,
    ...(material.ca ? { ca: material.ca, requestCert: true, rejectUnauthorized: true } : {}),
  };
}

/** Reloads changed files into the listening server (new connections only) and keeps the expiry metric current. */
export function followCertificates(
  server: { readonly files: TlsFiles; readonly material: TlsMaterial; readonly listener: unknown },
  metrics: ServerMetrics,
  logger: Logger,
): CertificateWatcher {
  const { listener } = server;
  const names = server.files.clientAllowedNames ?? [];
  // Before the HTTP layer reads a byte: a client the CA signed but not named in the list is disconnected.
  if (listener instanceof TlsServer && names.length > 0) {
    listener.prependListener('secureConnection', clientNameGate(names, rateLimitedWarn(logger)));
    logger.info(
      { clientAllowedNames: names },
      'mTLS: client certificates must name one of --client-allowed-names',
    );
  }
  metrics.certificateExpiry.set(server.material.notAfter.getTime() / 1000);
  return watchCertificates(server.files, server.material, {
    apply: (next) => {
      if (listener instanceof TlsServer) listener.setSecureContext({ ...httpsOptions(next), ...TLS_POLICY });
      metrics.certificateExpiry.set(next.notAfter.getTime() / 1000);
    },
    logger,
  });
}

/** Not ready once the certificate in use has expired; /readyz?verbose shows its subject and notAfter. */
export function certificateComponent(certificates: CertificateWatcher): HealthComponent {
  return {
    name: 'certificate',
    check: () =>
      certificates.current().notAfter.getTime() > Date.now()
        ? { ok: true }
        : {
            ok: false,
            reason: `serving certificate expired at ${certificates.current().notAfter.toISOString()}`,
          },
    detail: {
      key: 'certificate',
      describe: () => ({
        subject: certificates.current().subject,
        notAfter: certificates.current().notAfter.toISOString(),
      }),
    },
  };
}
