/**
 * The serving certificate as a part of serve (src/server/certificates.ts):
 * the flags' files or --dev's generated ones (generated once, then reused),
 * the HTTPS options with and without a client CA, the expiry gauge and a
 * reload applied to the listening TLS server, and the certificate's say in
 * readiness.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createServerMetrics } from '../../src/http/metrics.js';
import { loadTlsMaterial, type CertificateWatcher, type TlsMaterial } from '../../src/http/tls.js';
import {
  certificateComponent,
  followCertificates,
  httpsOptions,
  servingCertificateFiles,
} from '../../src/server/certificates.js';
import { capturingLogger } from '../kit/helpers.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'server-certs-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const FLAGS = {
  tlsCertFile: undefined,
  tlsPrivateKeyFile: undefined,
  clientCaFile: undefined,
  clientAllowedNames: [],
};

describe('servingCertificateFiles', () => {
  it("the flags' files when both are given, with the client CA", async () => {
    const { logger, lines } = capturingLogger();
    const files = await servingCertificateFiles(
      {
        ...FLAGS,
        tlsCertFile: '/a.crt',
        tlsPrivateKeyFile: '/a.key',
        clientCaFile: '/ca.crt',
        certDir: '/unused',
      },
      logger,
    );
    expect(files).toEqual({
      certFile: '/a.crt',
      keyFile: '/a.key',
      clientCaFile: '/ca.crt',
      clientAllowedNames: [],
    });
    expect(lines).toEqual([]);
  });

  it("--dev: generates the folder's certificate and key once, says so, and reuses them after", async () => {
    const certDir = tempDir();
    const { logger, lines } = capturingLogger();
    const files = await servingCertificateFiles({ ...FLAGS, clientCaFile: '/ca.crt', certDir }, logger);
    expect(files).toEqual({
      certFile: join(certDir, 'tls.crt'),
      keyFile: join(certDir, 'tls.key'),
      clientCaFile: '/ca.crt',
      clientAllowedNames: [],
    });
    expect(existsSync(files.certFile) && existsSync(files.keyFile)).toBe(true);
    expect(existsSync(join(certDir, 'ca.key'))).toBe(false);
    expect(lines.map((l) => [l.level, l.msg, l['certDir']])).toEqual([
      [30, 'generated dev certificates', certDir],
    ]);
    expect(lines[0]!['sans']).toEqual(expect.arrayContaining(['gateway-routability-webhook.default.svc']));
    const cert = readFileSync(files.certFile);
    // A certificate flag without its key is not enough: the folder's files again, not generated anew.
    expect(await servingCertificateFiles({ ...FLAGS, tlsCertFile: '/a.crt', certDir }, logger)).toEqual({
      certFile: join(certDir, 'tls.crt'),
      keyFile: join(certDir, 'tls.key'),
      clientCaFile: undefined,
      clientAllowedNames: [],
    });
    expect(readFileSync(files.certFile)).toEqual(cert);
    expect(lines).toHaveLength(1);
  });

  it('--dev with only one of the two files in the folder generates both', async () => {
    const certDir = tempDir();
    const { logger, lines } = capturingLogger();
    await servingCertificateFiles({ ...FLAGS, certDir }, logger);
    rmSync(join(certDir, 'tls.key'));
    await servingCertificateFiles({ ...FLAGS, certDir }, logger);
    expect(existsSync(join(certDir, 'tls.key'))).toBe(true);
    expect(lines).toHaveLength(2);
  });
});

describe('httpsOptions', () => {
  const material = { cert: Buffer.from('c'), key: Buffer.from('k') } as TlsMaterial;
  it('the key and certificate; a client CA asks for and requires client certificates', () => {
    expect(httpsOptions({ ...material, ca: undefined })).toEqual({ key: material.key, cert: material.cert });
    const ca = Buffer.from('ca');
    expect(httpsOptions({ ...material, ca })).toEqual({
      key: material.key,
      cert: material.cert,
      ca,
      requestCert: true,
      rejectUnauthorized: true,
    });
  });
});

describe('followCertificates', () => {
  it('sets the expiry gauge, and applies a reloaded certificate to the TLS server and the gauge', async () => {
    const { logger } = capturingLogger();
    const dir = tempDir();
    const files = await servingCertificateFiles({ ...FLAGS, certDir: dir }, logger);
    const material = await loadTlsMaterial(files);
    const registry = new Registry();
    const metrics = createServerMetrics(registry);
    const listener = createServer({ ...httpsOptions(material) });
    const applied = vi.spyOn(listener, 'setSecureContext');
    const watcher = followCertificates({ files, material, listener }, metrics, logger);
    try {
      const expiry = async () =>
        (await registry.getSingleMetric('routability_webhook_certificate_expiry_timestamp_seconds')!.get())
          .values[0]?.value;
      expect(await expiry()).toBe(material.notAfter.getTime() / 1000);
      // New files in place (another generated pair).
      const other = await servingCertificateFiles({ ...FLAGS, certDir: tempDir() }, logger);
      copyFileSync(other.certFile, files.certFile);
      copyFileSync(other.keyFile, files.keyFile);
      metrics.certificateExpiry.set(0);
      await watcher.reload();
      const next = watcher.current();
      expect(next.digest).not.toBe(material.digest);
      expect(applied).toHaveBeenCalledTimes(1);
      expect(applied.mock.calls[0]![0]).toMatchObject({ cert: next.cert, key: next.key });
      expect(await expiry()).toBe(next.notAfter.getTime() / 1000);
    } finally {
      watcher.stop();
    }
  });

  it('a listener that is not a TLS server only moves the gauge', async () => {
    const { logger } = capturingLogger();
    const files = await servingCertificateFiles({ ...FLAGS, certDir: tempDir() }, logger);
    const material = await loadTlsMaterial(files);
    const metrics = createServerMetrics(new Registry());
    const watcher = followCertificates({ files, material, listener: {} }, metrics, logger);
    const other = await servingCertificateFiles({ ...FLAGS, certDir: tempDir() }, logger);
    copyFileSync(other.certFile, files.certFile);
    copyFileSync(other.keyFile, files.keyFile);
    await expect(watcher.reload()).resolves.toBeUndefined();
    watcher.stop();
  });
});

describe('certificateComponent', () => {
  const watcherOf = (notAfter: Date): CertificateWatcher => ({
    current: () => ({ notAfter, subject: 'CN=webhook' }) as TlsMaterial,
    stop: () => undefined,
    reload: () => Promise.resolve(),
  });

  it('ready while the certificate is valid; not ready once it has expired, saying when', () => {
    const valid = certificateComponent(watcherOf(new Date(Date.now() + 60_000)));
    expect(valid.name).toBe('certificate');
    expect(valid.check?.()).toEqual({ ok: true });
    const at = new Date(Date.now() - 1);
    expect(certificateComponent(watcherOf(at)).check?.()).toEqual({
      ok: false,
      reason: `serving certificate expired at ${at.toISOString()}`,
    });
  });

  it('/readyz?verbose shows its subject and notAfter under certificate', () => {
    const notAfter = new Date('2030-01-02T03:04:05.000Z');
    const { detail } = certificateComponent(watcherOf(notAfter));
    expect(detail?.key).toBe('certificate');
    expect(detail?.describe()).toEqual({ subject: 'CN=webhook', notAfter: '2030-01-02T03:04:05.000Z' });
  });
});
