/**
 * The admission chain as the apiserver runs it, over real HTTPS: /mutate, apply
 * the returned JSON Patch, then /validate the patched object. The two defects
 * of the adversarial review are tested here end to end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseGateway, type Address } from '../kit/gateways.js';
import { httpsPost } from '../kit/http.js';
import {
  startServe,
  startServeWithCerts,
  type RunningServer,
  type ServingWithCerts,
} from '../kit/server-process.js';
import { type CertFiles } from '../kit/key-files.js';

let served: ServingWithCerts;
let certs: CertFiles;
let server: RunningServer;

beforeAll(async () => {
  served = await startServeWithCerts([
    '--service-cidr',
    '10.96.0.0/12,fd00:10:96::/112',
    '--status-policy',
    'enforce',
  ]);
  ({ certs, server } = served);
});
afterAll(async () => served?.stop());

let uid = 0;
function statusReview(object: unknown, oldObject: unknown) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `00000000-0000-0000-0000-${String(++uid).padStart(12, '0')}`,
      kind: { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' },
      resource: { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways' },
      subResource: 'status',
      name: 'gw',
      namespace: 'apps',
      operation: 'UPDATE',
      object,
      oldObject,
    },
  };
}

async function ask(path: string, body: unknown) {
  const res = await httpsPost(server.port, `${path}?timeout=10s`, JSON.stringify(body), {
    ca: certs.generated.caCert,
  });
  expect(res.status).toBe(200);
  return JSON.parse(res.body).response as {
    allowed: boolean;
    patch?: string;
    warnings?: string[];
    status?: { message: string };
  };
}

/** Applies the `add` operations the mutating webhook returns (RFC 6902; add replaces an existing member). */
function applyPatch(object: unknown, patch: string | undefined): unknown {
  const copy = structuredClone(object) as Record<string, unknown>;
  if (!patch) return copy;
  for (const op of JSON.parse(Buffer.from(patch, 'base64').toString()) as {
    op: string;
    path: string;
    value: unknown;
  }[]) {
    expect(op.op).toBe('add');
    const keys = op.path.split('/').slice(1);
    let parent: Record<string, unknown> = copy;
    for (const key of keys.slice(0, -1)) parent = parent[key] as Record<string, unknown>;
    parent[keys[keys.length - 1]!] = op.value;
  }
  return copy;
}

async function chain(object: unknown, oldObject: unknown) {
  const mutated = await ask('/mutate', statusReview(object, oldObject));
  const patched = applyPatch(object, mutated.patch);
  return { mutated, patched, validated: await ask('/validate', statusReview(patched, oldObject)) };
}

describe('mutate → patch → validate over HTTPS (--status-policy enforce)', () => {
  it('a controller rewriting only a condition is not denied for an entry the mutation defaulted', async () => {
    // Stored before the webhook existed: a ClusterIP with no routability.
    const stored = baseGateway({ status: [{ value: '10.96.0.42' }] });
    const written = baseGateway({
      status: [{ value: '10.96.0.42' }],
      conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
    });
    const { mutated, patched, validated } = await chain(written, stored);
    expect((patched as { status: { addresses: Address[] } }).status.addresses[0]!['routability']).toBe(
      'External',
    );
    expect(mutated.allowed).toBe(true);
    expect(validated.allowed).toBe(true);
    expect(validated.warnings?.[0]).toMatch(/^status\.addresses\[0\]: unchanged, so allowed, although now: /);
  });

  it('the same entry written with another spelling of its IP is still unchanged', async () => {
    const stored = baseGateway({ status: [{ value: 'FD00:10:96::A', routability: 'Cluster' }] });
    const written = baseGateway({
      status: [{ value: 'fd00:10:96::a', routability: 'Cluster' }],
      conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
    });
    expect((await chain(written, stored)).validated.allowed).toBe(true);
  });

  it('a malformed routability is denied even though the status policy is only a policy', async () => {
    const written = baseGateway({ status: [{ value: '203.0.113.10', routability: 'external' }] });
    const { validated } = await chain(written, baseGateway());
    expect(validated.allowed).toBe(false);
    expect(validated.status?.message).toMatch(
      /^status\.addresses\[0\]\.routability: Unsupported value: "external"/,
    );
  });

  it('a status "" is defaulted to External by the mutation, then judged as External', async () => {
    const written = baseGateway({ status: [{ value: '203.0.113.10', routability: '' }] });
    const { patched, validated } = await chain(written, baseGateway());
    expect((patched as { status: { addresses: Address[] } }).status.addresses[0]!['routability']).toBe(
      'External',
    );
    expect(validated.allowed).toBe(true);
  });
});

describe('default --status-policy warn: malformed routability still denied', () => {
  let warnServer: RunningServer;
  beforeAll(async () => {
    warnServer = await startServe([
      '--tls-cert-file',
      certs.certFile,
      '--tls-private-key-file',
      certs.keyFile,
      '--service-cidr',
      '10.96.0.0/12',
    ]);
  });
  afterAll(async () => warnServer?.stop());

  it('status routability "external" is denied under warn', async () => {
    const body = statusReview(
      baseGateway({ status: [{ value: '203.0.113.10', routability: 'external' }] }),
      baseGateway(),
    );
    const res = await httpsPost(warnServer.port, '/validate?timeout=10s', JSON.stringify(body), {
      ca: certs.generated.caCert,
    });
    expect(JSON.parse(res.body).response.allowed).toBe(false);
  });
});
