/** Certificate rotation the way a Secret volume does it, and graceful SIGTERM. */
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { generateCertificates } from '../../src/certs/generate.js';
import { eventually, httpGet, httpsPost, startServe, type RunningServer } from '../support/server-process.js';

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reviews', `${name}.json`), 'utf8');

/** Lays out files as the kubelet does: tls.crt → ..data/tls.crt, ..data → ..<timestamp>/. */
async function secretVolume(dir: string, version: string) {
  const certs = await generateCertificates({ service: 'gateway-routability-webhook', namespace: 'test' });
  const versioned = join(dir, `..${version}`);
  mkdirSync(versioned);
  writeFileSync(join(versioned, 'tls.crt'), certs.cert);
  writeFileSync(join(versioned, 'tls.key'), certs.key);
  symlinkSync(`..${version}`, join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data')); // atomic swap, as the kubelet does
  return certs;
}

function peerFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost' },
      () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.destroy();
      },
    );
    socket.once('error', reject);
  });
}

/** Starts serve on the tls.crt/tls.key of a folder (plain files or Secret-volume symlinks). */
function serveFrom(dir: string): Promise<RunningServer> {
  return startServe([
    '--tls-cert-file',
    join(dir, 'tls.crt'),
    '--tls-private-key-file',
    join(dir, 'tls.key'),
    '--service-cidr',
    '10.96.0.0/12',
  ]);
}

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe('certificate rotation without restart', () => {
  it('serves the new certificate on new connections after a symlink swap', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rw-secret-'));
    const first = await secretVolume(dir, '2026_11_29_09_00_00.1');
    symlinkSync('..data/tls.crt', join(dir, 'tls.crt'));
    symlinkSync('..data/tls.key', join(dir, 'tls.key'));
    server = await serveFrom(dir);
    const running = server;
    expect(await peerFingerprint(running.port)).toBe(new X509Certificate(first.cert).fingerprint256);

    const second = await secretVolume(dir, '2026_11_29_10_00_00.2');
    const wanted = new X509Certificate(second.cert).fingerprint256;
    const swappedAt = Date.now();
    await eventually(async () => (await peerFingerprint(running.port)) === wanted, 15_000, 100);
    const tookMs = Date.now() - swappedAt;
    // The folder watch should see it at once; the 10 s poll is the fallback.
    expect(tookMs).toBeLessThan(12_000);
    const res = await httpsPost(running.port, '/validate', fixture('create-allowed'), { ca: second.caCert });
    expect(res.status).toBe(200);
    expect(running.logs.some((l) => l['msg'] === 'serving certificate reloaded')).toBe(true);
  });

  it('keeps serving the old certificate when the new files are broken', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rw-broken-'));
    const certs = await generateCertificates({ service: 'gateway-routability-webhook', namespace: 'test' });
    writeFileSync(join(dir, 'tls.crt'), certs.cert);
    writeFileSync(join(dir, 'tls.key'), certs.key);
    server = await serveFrom(dir);
    const running = server;
    writeFileSync(join(dir, 'tls.crt'), 'garbage');
    await eventually(() =>
      running.logs.some((l) => l['msg'] === 'certificate reload failed; still serving the previous one'),
    );
    expect(await peerFingerprint(running.port)).toBe(new X509Certificate(certs.cert).fingerprint256);
    const res = await httpsPost(running.port, '/validate', fixture('create-allowed'), { ca: certs.caCert });
    expect(res.status).toBe(200);
  });
});

describe('SIGTERM', () => {
  it('finishes the request in flight, turns readiness off, and exits 0 within the grace period', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rw-term-'));
    const certs = await generateCertificates({ service: 'gateway-routability-webhook', namespace: 'test' });
    writeFileSync(join(dir, 'tls.crt'), certs.cert);
    writeFileSync(join(dir, 'tls.key'), certs.key);
    server = await serveFrom(dir);
    const running = server;
    const body = Buffer.from(fixture('create-allowed'));

    // Start a request and send only half of its body: it is in flight when SIGTERM arrives.
    const answer = new Promise<{ status: number; body: string; connection: string | undefined }>(
      (resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: running.port,
            path: '/validate',
            method: 'POST',
            ca: certs.caCert,
            servername: 'localhost',
            headers: { 'content-type': 'application/json', 'content-length': body.length },
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, body: text, connection: res.headers['connection'] }),
            );
          },
        );
        req.on('error', reject);
        req.write(body.subarray(0, 100));
        setTimeout(() => {
          running.proc.kill('SIGTERM');
          setTimeout(() => req.end(body.subarray(100)), 500);
        }, 200);
      },
    );

    const started = Date.now();
    // The half-sent request holds shutdown open, so the health port still answers, with 503.
    await eventually(async () => (await httpGet(running.healthPort, '/readyz')).status === 503, 2_000, 20);
    const res = await answer;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).response.allowed).toBe(true);
    expect(res.connection).toBe('close');
    const exit = await running.exited;
    expect(exit.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(running.logs.map((l) => l['msg'])).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
  });
});
