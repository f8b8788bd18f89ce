/** The built server over real HTTPS: decisions, errors, limits, health, metrics, mTLS, start-up failures. */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { join } from 'node:path';
import selfsigned from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseGateway } from '../kit/gateways.js';
import { handshake, legacyClient } from '../kit/tls-probe.js';
import { upload } from '../kit/upload.js';
import { eventually } from '../kit/eventually.js';
import { httpGet, httpsPost } from '../kit/http.js';
import {
  runCli,
  startServe,
  startServeWithCerts,
  type RunningServer,
  type ServingWithCerts,
} from '../kit/server-process.js';
import { writeCerts, type CertFiles } from '../kit/key-files.js';

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reviews', `${name}.json`), 'utf8'));

let served: ServingWithCerts;
let certs: CertFiles;
let server: RunningServer;

beforeAll(async () => {
  served = await startServeWithCerts(['--service-cidr', '10.96.0.0/12,fd00:10:96::/112']);
  ({ certs, server } = served);
});
afterAll(async () => served?.stop());

const post = (body: unknown, path = '/validate') =>
  httpsPost(server.port, `${path}?timeout=10s`, typeof body === 'string' ? body : JSON.stringify(body), {
    ca: certs.generated.caCert,
  });

describe('serve over HTTPS', () => {
  it('verifies against the generated CA and denies with the precise message', async () => {
    const res = await post(fixture('create-cluster-outside-range'));
    expect(res.status).toBe(200);
    const review = JSON.parse(res.body);
    expect(review.response).toMatchObject({ uid: '11111111-0000-0000-0000-000000000003', allowed: false });
    expect(review.response.status.message).toBe(
      'spec.addresses[0].value: Invalid value: "10.0.0.5": routability Cluster requires an address inside the service range (10.96.0.0/12, fd00:10:96::/112)',
    );
  });

  it('allows a valid Gateway and patches status on /mutate', async () => {
    expect(JSON.parse((await post(fixture('create-allowed'))).body).response.allowed).toBe(true);
    const mutated = JSON.parse((await post(fixture('status-defaulting'), '/mutate')).body).response;
    expect(mutated.patchType).toBe('JSONPatch');
  });

  it('speaks HTTP/1.1 with keep-alive', async () => {
    const res = await post(fixture('create-allowed'));
    expect(res.headers['connection']).toBe('keep-alive');
  });

  it('negotiates TLS 1.3 by default and accepts a TLS 1.2-only client', async () => {
    expect(await handshake(server.port)).toEqual({ protocol: 'TLSv1.3' });
    expect(await handshake(server.port, { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' })).toEqual({
      protocol: 'TLSv1.2',
    });
  });

  it.each(['TLSv1', 'TLSv1.1'] as const)(
    'refuses a %s client with a protocol_version alert: its own minimum is TLS 1.2',
    async (version) => {
      // The same client completes a handshake with a server configured wrongly on
      // purpose (minimum TLSv1), so the refusal below is the webhook's setting,
      // not the client's or OpenSSL's defaults.
      const lax = createTlsServer(
        {
          key: certs.generated.key,
          cert: certs.generated.cert,
          minVersion: 'TLSv1',
          ciphers: 'DEFAULT@SECLEVEL=0',
        },
        (socket) => socket.end(),
      );
      await new Promise<void>((resolve) => lax.listen(0, '127.0.0.1', resolve));
      try {
        const port = (lax.address() as AddressInfo).port;
        expect(await handshake(port, legacyClient(version))).toEqual({ protocol: version });
      } finally {
        lax.close();
      }
      expect(await handshake(server.port, legacyClient(version))).toEqual({
        error: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
      });
    },
  );

  it('answers 400 for undecodable bodies and keeps serving', async () => {
    expect((await post('{"apiVersion":')).status).toBe(400);
    expect((await post('not json')).status).toBe(400);
    expect((await post({ hello: 'world' })).status).toBe(400);
    expect((await httpsPost(server.port, '/validate', 'x', { contentType: 'text/plain' })).status).toBe(400);
    expect((await post(fixture('create-allowed'))).status).toBe(200);
  });

  it('answers 404 for unknown paths', async () => {
    const res = await httpsPost(server.port, '/admit', '{}');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toEqual({ error: 'no route for POST /admit' });
  });

  it('serves a 6 MiB review', async () => {
    const review = fixture('create-cluster-outside-range');
    review.request.object.metadata.annotations = { big: 'x'.repeat(6 * 1024 * 1024) };
    const res = await post(review);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).response.allowed).toBe(false);
  });

  it('answers 413 past 7 MiB, readable by a client that is still sending, then closes cleanly', async () => {
    // Read until the server closes: a reset after the answer would be seen here.
    const result = await upload({
      port: server.port,
      ca: certs.generated.caCert,
      declaredBytes: 8 * 1024 * 1024,
      timeoutMs: 20_000,
    });
    expect(result).toMatchObject({ status: 413, sentAll: true, ended: 'closed', errorCode: undefined });
    expect(result.text).toContain('{"error":"request body is larger than 7340032 bytes"}');
    expect((await post(fixture('create-allowed'))).status).toBe(200);
  });

  it('reports health, readiness and metrics on the plain-HTTP port', async () => {
    expect((await httpGet(server.healthPort, '/healthz')).status).toBe(200);
    expect((await httpGet(server.healthPort, '/readyz')).body).toBe('ok\n');
    const verbose = JSON.parse((await httpGet(server.healthPort, '/readyz?verbose')).body);
    expect(verbose.detail.serviceRanges).toEqual({
      source: 'flag --service-cidr',
      ranges: ['10.96.0.0/12', 'fd00:10:96::/112'],
    });
    const metrics = (await httpGet(server.healthPort, '/metrics')).body;
    expect(metrics).toMatch(
      /routability_webhook_requests_total\{webhook="validate",operation="CREATE",outcome="denied",code="200"\} \d+/,
    );
    expect(metrics).toMatch(
      /routability_webhook_requests_total\{webhook="validate",operation="unknown",outcome="error",code="400"\} \d+/,
    );
    expect(metrics).toMatch(/routability_webhook_request_duration_seconds_bucket/);
    expect(metrics).toMatch(/routability_webhook_inflight_requests 0/);
    const expiry = /routability_webhook_certificate_expiry_timestamp_seconds (\d+)/.exec(metrics);
    expect(Number(expiry?.[1])).toBeGreaterThan(Date.now() / 1000);
    expect(metrics).toMatch(/process_resident_memory_bytes/);
  });

  it('logs one JSON line per review with the decision, never the object', async () => {
    await post(fixture('create-case-slip'));
    // The log line travels through the child's stdout pipe and may land just after the answer.
    const isLine = (l: Record<string, unknown>) =>
      l['msg'] === 'review' && l['uid'] === '11111111-0000-0000-0000-000000000005';
    await eventually(() => server.logs.some(isLine), 'the review log line', 5_000, 10);
    const line = server.logs.find(isLine);
    expect(line).toMatchObject({
      webhook: 'validate',
      kind: 'Gateway',
      namespace: 'apps',
      name: 'gw',
      operation: 'CREATE',
      decision: 'denied',
      codes: ['RoutabilityUnsupported'],
    });
    expect(typeof line?.['durationMs']).toBe('number');
    expect(JSON.stringify(server.logs)).not.toContain('gatewayClassName');
  });
});

describe('mutual TLS with --client-ca-file', () => {
  it('refuses clients without a certificate and serves those the CA signed', async () => {
    const clientCert = await selfsigned.generate([{ name: 'commonName', value: 'kube-apiserver' }], {
      keyType: 'ec',
      algorithm: 'sha256',
      ca: { key: certs.generated.caKey, cert: certs.generated.caCert },
      extensions: [{ name: 'extKeyUsage', clientAuth: true }],
    });
    const mtls = await startServe([
      '--tls-cert-file',
      certs.certFile,
      '--tls-private-key-file',
      certs.keyFile,
      '--client-ca-file',
      certs.caFile,
      '--service-cidr',
      '10.96.0.0/12',
    ]);
    try {
      const body = JSON.stringify(fixture('create-allowed'));
      const refused = await httpsPost(mtls.port, '/validate', body, { ca: certs.generated.caCert }).then(
        () => 'answered',
        (err: NodeJS.ErrnoException) => err.code,
      );
      // TLS 1.3: the server's certificate_required alert, not just any socket error.
      expect(refused).toBe('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
      const stranger = await selfsigned.generate([{ name: 'commonName', value: 'kube-apiserver' }], {
        keyType: 'ec',
        algorithm: 'sha256',
        extensions: [{ name: 'extKeyUsage', clientAuth: true }],
      });
      const untrusted = await httpsPost(mtls.port, '/validate', body, {
        ca: certs.generated.caCert,
        cert: stranger.cert,
        key: stranger.private,
      }).then(
        () => 'answered',
        (err: NodeJS.ErrnoException) => err.code,
      );
      // A certificate the CA did not sign: the server ends the handshake (an
      // unknown_ca/bad_certificate alert, or a reset when the client was already writing).
      expect([
        'ECONNRESET',
        'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
        'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
      ]).toContain(untrusted);
      const ok = await httpsPost(mtls.port, '/validate', body, {
        ca: certs.generated.caCert,
        cert: clientCert.cert,
        key: clientCert.private,
      });
      expect(ok.status).toBe(200);
    } finally {
      await mtls.stop();
    }
  });
});

describe('start-up failures stop with one line and exit 2', () => {
  it.each([
    [
      ['--service-cidr', '10.96.0.1/12', '--dev'],
      /--service-cidr: "10.96.0.1\/12" has host bits set; did you mean 10.96.0.0\/12\?/,
    ],
    [['--spec-policy', 'strict', '--dev'], /--spec-policy: must be one of enforce, warn, got "strict"/],
    [['--no-such-flag'], /Unknown option '--no-such-flag'/],
    [['--service-cidr', '10.96.0.0/12'], /--tls-cert-file and --tls-private-key-file are required/],
    [
      ['--tls-cert-file', '/nonexistent/tls.crt', '--tls-private-key-file', '/nonexistent/tls.key'],
      /cannot read certificate \/nonexistent\/tls.crt: ENOENT/,
    ],
  ])('%j', async (args, message) => {
    const result = await runCli(['serve', '--port', '0', '--health-port', '0', ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a key that does not match the certificate is refused', async () => {
    const other = await writeCerts();
    const result = await runCli([
      'serve',
      '--port',
      '0',
      '--health-port',
      '0',
      '--tls-cert-file',
      certs.certFile,
      '--tls-private-key-file',
      other.keyFile,
      '--service-cidr',
      '10.96.0.0/12',
    ]).finally(() => other.remove());
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/does not match the certificate/);
  });

  it('reads flags from ROUTABILITY_WEBHOOK_* environment variables', async () => {
    const fromEnv = await startServe([], {
      ROUTABILITY_WEBHOOK_TLS_CERT_FILE: certs.certFile,
      ROUTABILITY_WEBHOOK_TLS_PRIVATE_KEY_FILE: certs.keyFile,
      ROUTABILITY_WEBHOOK_SERVICE_CIDR: '10.128.0.0/16',
    });
    try {
      const review = fixture('create-allowed');
      review.request.object = baseGateway({ spec: [{ value: '10.128.0.9', routability: 'Cluster' }] });
      const res = await httpsPost(fromEnv.port, '/validate', JSON.stringify(review), {
        ca: certs.generated.caCert,
      });
      expect(JSON.parse(res.body).response.allowed).toBe(true);
    } finally {
      await fromEnv.stop();
    }
  });
});
