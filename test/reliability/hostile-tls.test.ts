/**
 * TLS 1.2 suites over the real listener: only ECDHE with AES-GCM or
 * ChaCha20-Poly1305 are accepted; TLS 1.3 works. The same probe run against a
 * server left at Node's defaults reports CBC suites, so the check can fail.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { connect, getCiphers } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type Served } from './helpers.js';

/** Negotiates with exactly one suite; resolves the protocol and cipher, or undefined when refused. */
function negotiate(
  port: number,
  options: { ciphers?: string; maxVersion?: 'TLSv1.2' | 'TLSv1.3' },
): Promise<{ protocol: string; cipher: string } | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...options });
    socket.setTimeout(5_000, () => socket.destroy());
    socket.once('secureConnect', () => {
      const result = { protocol: socket.getProtocol() ?? '', cipher: socket.getCipher().standardName };
      socket.destroy();
      resolve(result);
    });
    socket.once('error', () => resolve(undefined));
    socket.once('close', () => resolve(undefined));
  });
}

/** Every TLS 1.2 suite this OpenSSL offers that the server accepts. */
async function acceptedTls12Suites(port: number): Promise<string[]> {
  const accepted: string[] = [];
  for (const name of getCiphers().map((c) => c.toUpperCase())) {
    if (name.startsWith('TLS_')) continue; // TLS 1.3 suites
    const result = await negotiate(port, { ciphers: name, maxVersion: 'TLSv1.2' });
    if (result) accepted.push(result.cipher);
  }
  return accepted;
}

const MODERN = /^TLS_ECDHE_(ECDSA|RSA)_WITH_(AES_(128|256)_GCM_SHA(256|384)|CHACHA20_POLY1305_SHA256)$/;

describe('TLS suites', () => {
  let served: Served;
  let lax: Server;
  beforeAll(async () => {
    served = await serve([], 'hostile-tls-');
    lax = createServer({
      key: readFileSync(served.certs.key),
      cert: readFileSync(served.certs.cert),
    });
    await new Promise<void>((done) => lax.listen(0, '127.0.0.1', done));
  }, 30_000);
  afterAll(async () => {
    await new Promise((done) => lax.close(done));
    await served.close();
  });

  it('accepts only ECDHE with AES-GCM or ChaCha20-Poly1305 on TLS 1.2', async () => {
    const accepted = await acceptedTls12Suites(served.server.port);
    expect(accepted.length).toBeGreaterThan(0);
    expect(accepted.filter((c) => !MODERN.test(c))).toEqual([]);
    expect(accepted).toContain('TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256');
    expect(accepted).toContain('TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256');
  }, 60_000);

  it('refuses a CBC suite and accepts a GCM one', async () => {
    expect(
      await negotiate(served.server.port, { ciphers: 'ECDHE-ECDSA-AES128-SHA', maxVersion: 'TLSv1.2' }),
    ).toBeUndefined();
    expect(
      await negotiate(served.server.port, {
        ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256',
        maxVersion: 'TLSv1.2',
      }),
    ).toEqual({ protocol: 'TLSv1.2', cipher: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256' });
  });

  it('negotiates TLS 1.3 with its default suites', async () => {
    const result = await negotiate(served.server.port, {});
    expect(result?.protocol).toBe('TLSv1.3');
    expect(['TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_GCM_SHA256']).toContain(
      result?.cipher,
    );
  });

  it('the probe flags a server left at Node defaults (CBC accepted)', async () => {
    const accepted = await acceptedTls12Suites((lax.address() as AddressInfo).port);
    expect(accepted.filter((c) => !MODERN.test(c)).length).toBeGreaterThan(0);
    expect(accepted).toContain('TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA');
  }, 60_000);
});
