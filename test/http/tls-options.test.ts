/**
 * The serving TLS set-up in-process: what loadTlsMaterial accepts and the
 * one-line reason it gives for each broken file, and what a listener built
 * with TLS_POLICY negotiates. https-server.test.ts checks the same policy on
 * the built server; these run inside the mutation subset
 * (vitest.mutation.config.ts), so a mutant in src/http/tls.ts meets them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificates, type GeneratedCertificates } from '../../src/certs/generate.js';
import { loadTlsMaterial, TLS_POLICY, type TlsFiles } from '../../src/http/tls.js';
import { handshake, legacyClient } from '../kit/tls-probe.js';

let dir: string;
let pair: GeneratedCertificates;
let other: GeneratedCertificates;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rw-tls-options-'));
  const req = { service: 'gateway-routability-webhook', namespace: 'test' };
  [pair, other] = await Promise.all([generateCertificates(req), generateCertificates(req)]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes the given contents into a fresh sub-folder; returns their paths. */
function writeFiles(contents: { cert: string; key: string; ca?: string }): TlsFiles {
  const sub = mkdtempSync(join(dir, 'pair-'));
  const files: TlsFiles = {
    certFile: join(sub, 'tls.crt'),
    keyFile: join(sub, 'tls.key'),
    ...(contents.ca !== undefined ? { clientCaFile: join(sub, 'ca.crt') } : {}),
  };
  writeFileSync(files.certFile, contents.cert);
  writeFileSync(files.keyFile, contents.key);
  if (files.clientCaFile) writeFileSync(files.clientCaFile, contents.ca ?? '');
  return files;
}
describe('loadTlsMaterial', () => {
  it('reads a matching pair: the bytes, the subject, notAfter, no CA', async () => {
    const files = writeFiles({ cert: pair.cert, key: pair.key });
    const m = await loadTlsMaterial(files);
    expect(m.cert.toString()).toBe(pair.cert);
    expect(m.key.toString()).toBe(pair.key);
    expect(m.ca).toBeUndefined();
    expect(m.subject).toContain('gateway-routability-webhook');
    // generateCertificates issues for a year by default: notAfter is in the future, as a real Date.
    expect(m.notAfter.getTime()).toBeGreaterThan(Date.parse('2026-01-01'));
    expect(Number.isNaN(m.notAfter.getTime())).toBe(false);
    expect(m.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads the client CA when one is named, and its bytes change the digest', async () => {
    const without = await loadTlsMaterial(writeFiles({ cert: pair.cert, key: pair.key }));
    const withCa = await loadTlsMaterial(writeFiles({ cert: pair.cert, key: pair.key, ca: pair.caCert }));
    const otherCa = await loadTlsMaterial(writeFiles({ cert: pair.cert, key: pair.key, ca: other.caCert }));
    expect(withCa.ca?.toString()).toBe(pair.caCert);
    expect(new Set([without.digest, withCa.digest, otherCa.digest]).size).toBe(3);
  });

  it('gives the same digest for the same bytes and another one when the key or certificate changes', async () => {
    const a = await loadTlsMaterial(writeFiles({ cert: pair.cert, key: pair.key }));
    const again = await loadTlsMaterial(writeFiles({ cert: pair.cert, key: pair.key }));
    const b = await loadTlsMaterial(writeFiles({ cert: other.cert, key: other.key }));
    expect(again.digest).toBe(a.digest);
    expect(b.digest).not.toBe(a.digest);
  });

  it('names a missing file, which one it is, and the error code', async () => {
    const files = writeFiles({ cert: pair.cert, key: pair.key });
    const gone = join(dir, 'no-such-file');
    await expect(loadTlsMaterial({ ...files, certFile: gone })).rejects.toThrow(
      new Error(`cannot read certificate ${gone}: ENOENT`),
    );
    await expect(loadTlsMaterial({ ...files, keyFile: gone })).rejects.toThrow(
      new Error(`cannot read private key ${gone}: ENOENT`),
    );
    await expect(loadTlsMaterial({ ...files, clientCaFile: gone })).rejects.toThrow(
      new Error(`cannot read client CA ${gone}: ENOENT`),
    );
  });

  it('refuses files that hold no PEM certificate or key, naming the file', async () => {
    const noCert = writeFiles({ cert: 'not a certificate', key: pair.key });
    await expect(loadTlsMaterial(noCert)).rejects.toThrow(
      new Error(`${noCert.certFile} holds no PEM certificate`),
    );
    const noKey = writeFiles({ cert: pair.cert, key: 'not a key' });
    await expect(loadTlsMaterial(noKey)).rejects.toThrow(
      new Error(`${noKey.keyFile} holds no PEM private key`),
    );
    const noCa = writeFiles({ cert: pair.cert, key: pair.key, ca: 'not a CA' });
    await expect(loadTlsMaterial(noCa)).rejects.toThrow(
      new Error(`${noCa.clientCaFile} holds no PEM certificate`),
    );
  });

  it('refuses a key that belongs to another certificate', async () => {
    const files = writeFiles({ cert: pair.cert, key: other.key });
    await expect(loadTlsMaterial(files)).rejects.toThrow(
      new Error(`${files.keyFile} does not match the certificate in ${files.certFile}`),
    );
  });
});

describe('TLS_POLICY on a listener', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer({ cert: pair.cert, key: pair.key, ...TLS_POLICY });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('negotiates TLS 1.3 by default and TLS 1.2 when the client goes no higher', async () => {
    expect(await handshake(port)).toEqual({ protocol: 'TLSv1.3' });
    expect(await handshake(port, { maxVersion: 'TLSv1.2' })).toEqual({ protocol: 'TLSv1.2' });
  });

  it('refuses TLS 1.0 and 1.1 with a protocol_version alert', async () => {
    for (const version of ['TLSv1', 'TLSv1.1'] as const) {
      const result = await handshake(port, legacyClient(version));
      expect(result).toHaveProperty('error');
      expect(JSON.stringify(result)).toMatch(/PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL/i);
    }
  });

  it('refuses a TLS 1.2 client that offers only CBC suites', async () => {
    const result = await handshake(port, {
      maxVersion: 'TLSv1.2',
      ciphers: 'ECDHE-RSA-AES128-SHA256:ECDHE-ECDSA-AES128-SHA256',
    });
    // The server's handshake_failure alert (no shared cipher): not any error, such as the probe's timeout.
    // OpenSSL 3.0 (Node 20) names it SSLV3_ALERT_…, OpenSSL 3.5 (Node 24) SSL/TLS_ALERT_….
    expect(result).toHaveProperty('error');
    expect((result as { error: string }).error).toMatch(/^ERR_SSL_SSL(V3|\/TLS)_ALERT_HANDSHAKE_FAILURE$/);
  });
});
