/** Certificate rotation the way a Secret volume does it, and graceful SIGTERM. */
import { X509Certificate } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { generateCertificates } from '../../src/certs/generate.js';
import { eventually, sleep } from '../kit/eventually.js';
import { httpGet, httpsPost } from '../kit/http.js';
import { startServe, type RunningServer } from '../kit/server-process.js';
import { handshake, legacyClient } from '../kit/tls-probe.js';

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

/** The certificate re-read interval of serve (watchCertificates' default). */
const POLL_MS = 10_000;

let server: RunningServer | undefined;
/** Folders holding private keys, deleted after each test. */
const keyDirs: string[] = [];
const keyDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  keyDirs.push(dir);
  return dir;
};
afterEach(async () => {
  await server?.stop();
  server = undefined;
  for (const dir of keyDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('certificate rotation without restart', () => {
  it('serves the new certificate on new connections after a symlink swap', async () => {
    const dir = keyDir('rw-secret-');
    const first = await secretVolume(dir, '2026_11_29_09_00_00.1');
    symlinkSync('..data/tls.crt', join(dir, 'tls.crt'));
    symlinkSync('..data/tls.key', join(dir, 'tls.key'));
    server = await serveFrom(dir);
    const running = server;
    expect(await peerFingerprint(running.port)).toBe(new X509Certificate(first.cert).fingerprint256);

    const second = await secretVolume(dir, '2026_11_29_10_00_00.2');
    const wanted = new X509Certificate(second.cert).fingerprint256;
    // The folder watch sees the swap within about 0.2 s; the poll every 10 s is only
    // the fallback. Half the poll interval is a generous bound for a loaded machine
    // that a poll-only reload (up to 10 s) would usually miss; the reliable check
    // of the watch is test/http/certificate-watch.test.ts, whose poll never fires.
    await eventually(
      async () => (await peerFingerprint(running.port)) === wanted,
      'the new certificate served',
      POLL_MS / 2,
      100,
    );
    const res = await httpsPost(running.port, '/validate', fixture('create-allowed'), { ca: second.caCert });
    expect(res.status).toBe(200);
    expect(running.logs.some((l) => l['msg'] === 'serving certificate reloaded')).toBe(true);
    // The reloaded context keeps the TLS 1.2 minimum.
    expect(await handshake(running.port, legacyClient('TLSv1.1'))).toEqual({
      error: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
    });
  });

  it('keeps serving the old certificate when the new files are broken', async () => {
    const dir = keyDir('rw-broken-');
    const certs = await generateCertificates({ service: 'gateway-routability-webhook', namespace: 'test' });
    writeFileSync(join(dir, 'tls.crt'), certs.cert);
    writeFileSync(join(dir, 'tls.key'), certs.key);
    server = await serveFrom(dir);
    const running = server;
    writeFileSync(join(dir, 'tls.crt'), 'garbage');
    await eventually(
      () =>
        running.logs.some((l) => l['msg'] === 'certificate reload failed; still serving the previous one'),
      'the reload failure logged',
    );
    expect(await peerFingerprint(running.port)).toBe(new X509Certificate(certs.cert).fingerprint256);
    const res = await httpsPost(running.port, '/validate', fixture('create-allowed'), { ca: certs.caCert });
    expect(res.status).toBe(200);
  });
});

describe('SIGTERM', () => {
  it('finishes the request in flight, turns readiness off, and exits 0 within the grace period', async () => {
    const dir = keyDir('rw-term-');
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

    // The half-sent request holds shutdown open, so the health port still answers, with 503.
    await eventually(
      async () => (await httpGet(running.healthPort, '/readyz')).status === 503,
      'not ready',
      2_000,
      20,
    );
    const res = await answer;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).response.allowed).toBe(true);
    expect(res.connection).toBe('close');
    const exit = await running.exited;
    expect(exit.code).toBe(0);
    // In order, and without reaching the shutdown deadline (the default 25 s).
    const messages = running.logs.map((l) => l['msg']);
    expect(messages.indexOf('shutting down')).toBeGreaterThan(-1);
    expect(messages.indexOf('stopped')).toBeGreaterThan(messages.indexOf('shutting down'));
    expect(messages).not.toContain('shutdown timeout reached with requests still in flight; exiting');
  });

  it('exits by --shutdown-timeout-seconds while a request is still in flight', async () => {
    const dir = keyDir('rw-deadline-');
    const certs = await generateCertificates({ service: 'gateway-routability-webhook', namespace: 'test' });
    writeFileSync(join(dir, 'tls.crt'), certs.cert);
    writeFileSync(join(dir, 'tls.key'), certs.key);
    server = await startServe([
      '--tls-cert-file',
      join(dir, 'tls.crt'),
      '--tls-private-key-file',
      join(dir, 'tls.key'),
      '--service-cidr',
      '10.96.0.0/12',
      '--shutdown-timeout-seconds',
      '1',
    ]);
    const running = server;
    // Half a body that never completes: the request stays in flight until the
    // server gives up on it (Node's own request timeout is 30 s).
    const body = Buffer.from(fixture('create-allowed'));
    const client = request({
      host: '127.0.0.1',
      port: running.port,
      path: '/validate',
      method: 'POST',
      ca: certs.caCert,
      servername: 'localhost',
      headers: { 'content-type': 'application/json', 'content-length': body.length },
    });
    const clientEnded = new Promise<string>((resolve) => {
      client.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      client.on('response', () => resolve('answered'));
    });
    await new Promise<void>((resolve) => client.write(body.subarray(0, 100), () => resolve()));
    // Let the server parse the headers: from then on the request is in flight.
    await sleep(1_000);
    running.proc.kill('SIGTERM');

    // Bound: the 1 s deadline plus generous room for a loaded machine, well below
    // the 30 s request timeout after which the server would stop anyway.
    const exit = await Promise.race([
      running.exited,
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 15_000)),
    ]);
    expect(exit).toEqual({ code: 0, signal: null });
    const messages = running.logs.map((l) => l['msg']);
    expect(messages).toContain('shutdown timeout reached with requests still in flight; exiting');
    expect(messages).not.toContain('stopped');
    // The unfinished request was cut off, not answered.
    expect(await clientEnded).not.toBe('answered');
  }, 40_000);
});
