/** Property-based: random Gateways and hostile shapes never throw, answers are well formed, mutation is idempotent. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createReviewDecoder } from '../../src/admission/decode.js';
import { answerReview } from '../../src/admission/answer.js';
import { mutateGateway, validateGateway } from '../../src/rules/index.js';
import { WEBHOOKS } from '../../src/webhooks/gateway.js';
import { context, ranges } from '../kit/gateways.js';

const ctx = context({
  ranges: ranges('10.96.0.0/12', 'fd00:10:96::/112', { cidr: '10.200.0.0/16', terminating: true }),
  statusPolicy: 'warn',
});

const ipv4 = fc.oneof(
  fc.ipV4(),
  fc
    .tuple(fc.integer({ min: 96, max: 112 }), fc.nat(255), fc.nat(255))
    .map(([b, c, d]) => `10.${b}.${c}.${d}`),
);
const ipv6 = fc.oneof(
  fc.ipV6(),
  fc.nat(0xffff).map((n) => `fd00:10:96::${n.toString(16)}`),
);
const routability = fc.oneof(
  fc.constantFrom(
    'External',
    'Cluster',
    'cluster',
    'Public',
    'Private',
    'example.com/CorpWan',
    '',
    'ClusterFoo',
  ),
  fc.string({ maxLength: 300 }),
  fc.constant(undefined),
  fc.constant(null),
  fc.integer(),
);
const address = fc.record(
  {
    type: fc.oneof(
      fc.constantFrom('IPAddress', 'Hostname', 'NamedAddress', 'test/fake-invalid-type'),
      fc.constant(undefined),
    ),
    value: fc.oneof(
      ipv4,
      ipv6,
      fc.domain(),
      fc.constant('gw.apps.svc.cluster.local'),
      fc.string(),
      fc.constant(undefined),
      fc.integer(),
    ),
    routability,
  },
  { requiredKeys: [] },
);
const condition = fc.record({
  type: fc.constantFrom('AddressesAssigned', 'Programmed', 'Accepted'),
  status: fc.constantFrom('True', 'False', 'Unknown'),
  reason: fc.constantFrom('Assigned', 'PartiallyAssigned', 'NotAssigned', 'AddressNotAssigned', 'Programmed'),
  message: fc.oneof(fc.constant(''), fc.string()),
});
const gateway = fc.record({
  apiVersion: fc.constantFrom('gateway.networking.k8s.io/v1', 'gateway.networking.k8s.io/v1beta1'),
  kind: fc.constant('Gateway'),
  metadata: fc.record({ name: fc.constant('gw'), namespace: fc.constant('apps') }),
  spec: fc.record({ gatewayClassName: fc.constant('x'), addresses: fc.array(address, { maxLength: 16 }) }),
  status: fc.record({
    addresses: fc.array(address, { maxLength: 16 }),
    conditions: fc.array(condition, { maxLength: 4 }),
  }),
});
const operation = fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT');
const subResource = fc.constantFrom('', 'status');

describe('the engine on random Gateways', () => {
  it('never throws and keeps its own invariants', () => {
    fc.assert(
      fc.property(gateway, gateway, operation, subResource, (object, oldObject, op, sub) => {
        const result = validateGateway({ operation: op, subResource: sub, object, oldObject }, ctx);
        expect(result.allowed).toBe(result.violations.length === 0);
        expect(result.message === '').toBe(result.allowed);
        for (const w of result.warnings) expect(w.length).toBeLessThanOrEqual(120);
        expect(result.warnings.join('').length).toBeLessThanOrEqual(4096);
        for (const f of result.violations) expect(f.message.startsWith(`${f.field.toString()}: `)).toBe(true);
      }),
      { numRuns: 1500 },
    );
  });

  it('mutation is idempotent: applying the patch yields no further operations', () => {
    fc.assert(
      fc.property(gateway, (object) => {
        const request = { operation: 'UPDATE', subResource: 'status', object, oldObject: object };
        const first = mutateGateway(request, ctx);
        const patched = structuredClone(object) as { status: { addresses: Record<string, unknown>[] } };
        for (const op of first.patch) {
          const index = Number(op.path.split('/')[3]);
          expect(op.path).toBe(`/status/addresses/${index}/routability`);
          expect(patched.status.addresses[index]).toBeDefined();
          patched.status.addresses[index]!['routability'] = op.value;
        }
        // Nothing left undefaulted: every address without a routability (null reads
        // as unset) gets its operation, so a mutation that patched nothing could not pass.
        const patchedIndices = new Set(first.patch.map((op) => Number(op.path.split('/')[3])));
        object.status.addresses.forEach((a, i) => {
          if (a['routability'] == null) expect(patchedIndices.has(i)).toBe(true);
        });
        expect(mutateGateway({ ...request, object: patched }, ctx).patch).toEqual([]);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('hostile shapes through decode → rules → encode', () => {
  const decode = createReviewDecoder();
  const deep = (depth: number) => {
    let v: unknown = 'x';
    for (let i = 0; i < depth; i++) v = { spec: v, addresses: [v] };
    return v;
  };
  const hostile = fc.oneof(
    fc.anything({ maxDepth: 4, withObjectString: true, withNullPrototype: true }),
    fc.constant(
      JSON.parse('{"__proto__":{"addresses":[1]},"spec":{"__proto__":{"addresses":[{"routability":"x"}]}}}'),
    ),
    fc.constant({
      spec: { addresses: new Array(10_000).fill({ value: '10.0.0.1', routability: 'Cluster' }) },
    }),
    fc.constant(deep(2_000)),
    fc.constant({ spec: { addresses: [{ value: 'x'.repeat(1_000_000), routability: 'Cluster' }] } }),
    fc.constant({ spec: { addresses: [{ routability: 'x'.repeat(1_000_000) }] } }),
    fc.constant({
      spec: { addresses: { length: 3 } },
      status: { addresses: 'no', conditions: [null, 1, 'x', { type: 'AddressesAssigned' }] },
    }),
  );

  it('always answers a well-formed review with the request uid', () => {
    fc.assert(
      fc.property(
        hostile,
        hostile,
        operation,
        subResource,
        fc.constantFrom('validate', 'mutate'),
        (object, oldObject, op, sub, hook) => {
          const body = {
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            request: {
              uid: 'u-1',
              kind: { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' },
              resource: { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways' },
              operation: op,
              subResource: sub,
              object,
              oldObject,
            },
          };
          const answer = answerReview(decode, (r) => WEBHOOKS[hook](r, ctx), body);
          expect(answer.ok).toBe(true);
          if (!answer.ok) return;
          const response = answer.review.response;
          expect(answer.review.apiVersion).toBe('admission.k8s.io/v1');
          expect(response.uid).toBe('u-1');
          expect(typeof response.allowed).toBe('boolean');
          expect('patch' in response).toBe('patchType' in response);
          if (hook === 'validate') expect('patch' in response).toBe(false);
          expect(() => JSON.stringify(answer.review)).not.toThrow();
          expect(JSON.stringify(answer.review).length).toBeLessThan(200_000);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('decoding random JSON never throws, and refuses what is no AdmissionReview', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        const decoded = decode(value);
        // Random JSON is never a whole review envelope.
        expect(decoded.ok).toBe(false);
        if (!decoded.ok) expect(decoded.error).toMatch(/^not an AdmissionReview: /);
      }),
      { numRuns: 1000 },
    );
  });

  it('decodes every well-formed envelope, extra fields and all, to its own request', () => {
    const name = fc.string({ maxLength: 20 });
    const envelope = fc.record({
      apiVersion: fc.constantFrom('admission.k8s.io/v1', 'admission.k8s.io/v1beta1'),
      kind: fc.constant('AdmissionReview'),
      extra: fc.jsonValue({ maxDepth: 2 }),
      request: fc.record(
        {
          uid: fc.string({ minLength: 1, maxLength: 128 }),
          kind: fc.record({ group: name, version: name, kind: name }),
          resource: fc.record({ group: name, version: name, resource: name }),
          operation: fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT'),
          subResource: name,
          name,
          namespace: name,
          dryRun: fc.boolean(),
          object: fc.jsonValue({ maxDepth: 3 }),
        },
        { requiredKeys: ['uid', 'kind', 'resource', 'operation'] },
      ),
    });
    fc.assert(
      fc.property(envelope, (review) => {
        const decoded = decode(review);
        expect(decoded).toEqual({ ok: true, version: review.apiVersion, request: review.request });
      }),
      { numRuns: 500 },
    );
  });
});
