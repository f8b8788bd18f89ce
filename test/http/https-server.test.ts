/** The built server over real HTTPS: decisions, errors, limits, health, metrics, mTLS, start-up failures. */
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { join } from 'node:path';
import selfsigned from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseGateway } from '../support/gateways.js';
import {
  eventually,
  httpGet,
  httpsPost,
  runCli,
  startServe,
  writeCerts,
  type CertFiles,
  type RunningServer,
} from '../support/server-process.js';

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reviews', `${name}.json`), 'utf8'));

let certs: CertFiles;
let server: RunningServer;

beforeAll(async () => {
  certs = await writeCerts();
  server = await startServe([
    '--tls-cert-file',
    certs.certFile,
    '--tls-private-key-file',
    certs.keyFile,
    '--service-cidr',
    '10.96.0.0/12,fd00:10:96::/112',
  ]);
});
afterAll(async () => server?.stop());

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

  it('speaks HTTP/1.1 with keep-alive and TLS 1.2 or later', async () => {
    const res = await post(fixture('create-allowed'));
    expect(res.headers['connection']).toBe('keep-alive');
    const protocol = await new Promise<string | null>((resolve, reject) => {
      const socket = connect({
        host: '127.0.0.1',
        port: server.port,
        rejectUnauthorized: false,
        maxVersion: 'TLSv1.1',
        minVersion: 'TLSv1',
      });
      socket.once('secureConnect', () => {
        resolve(socket.getProtocol());
        socket.destroy();
      });
      socket.once('error', () => resolve(null));
      setTimeout(() => reject(new Error('no answer')), 5000).unref();
    });
    expect(protocol).toBeNull(); // TLS 1.1 is refused
  });

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

  it('answers 413 past 7 MiB, readable by a client that is still sending', async () => {
    const body = Buffer.alloc(8 * 1024 * 1024, 0x20);
    const res = await httpsPost(server.port, '/validate', body);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error).toMatch(/larger than 7340032 bytes/);
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
    await eventually(() => server.logs.some(isLine), 5_000, 10);
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
      await expect(httpsPost(mtls.port, '/validate', body, { ca: certs.generated.caCert })).rejects.toThrow();
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
      '--tls-cert-file',
      certs.certFile,
      '--tls-private-key-file',
      other.keyFile,
      '--service-cidr',
      '10.96.0.0/12',
    ]);
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
