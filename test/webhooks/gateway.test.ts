/**
 * The two Gateway webhooks (src/webhooks/gateway.ts), where the AdmissionReview protocol meets the
 * rules: which requests they judge, what an Outcome carries from the engine's result (causes,
 * codes, warnings, annotations), and which object each reads. One base request, changed per row.
 */
import { describe, expect, it } from 'vitest';
import { ALLOWED_UNTOUCHED } from '../../src/admission/outcome.js';
import type { AdmissionRequest } from '../../src/admission/review.js';
import { isGatewayRequest, mutateReview, validateReview, WEBHOOKS } from '../../src/webhooks/gateway.js';
import { baseGateway, context, ranges, type Address } from '../kit/gateways.js';

const GATEWAYS = { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways' };

function request(over: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: 'u-1',
    kind: { group: GATEWAYS.group, version: 'v1', kind: 'Gateway' },
    resource: GATEWAYS,
    namespace: 'apps',
    name: 'gw',
    operation: 'CREATE',
    object: baseGateway(),
    ...over,
  };
}

const spec = (...addresses: Address[]) => baseGateway({ spec: addresses });
const status = (...addresses: Address[]) => baseGateway({ status: addresses });
const OUTSIDE = { type: 'IPAddress', value: '192.168.0.1', routability: 'Cluster' };

describe('which requests the webhooks judge', () => {
  it.each<[string, Partial<AdmissionRequest>, boolean]>([
    ['a v1 Gateway', {}, true],
    [
      'a v1beta1 Gateway (same schema, matchPolicy Equivalent)',
      { resource: { ...GATEWAYS, version: 'v1beta1' } },
      true,
    ],
    ['another resource of the group', { resource: { ...GATEWAYS, resource: 'httproutes' } }, false],
    ['gateways of another group', { resource: { ...GATEWAYS, group: 'example.com' } }, false],
    ['a core resource', { resource: { group: '', version: 'v1', resource: 'services' } }, false],
  ])('%s: %s', (_name, over, judged) => {
    expect(isGatewayRequest(request(over))).toBe(judged);
    // A request that is not a Gateway's is let through untouched by both, whatever it holds.
    const bad = request({ ...over, object: spec(OUTSIDE) });
    if (!judged)
      for (const hook of [validateReview, mutateReview]) expect(hook(bad, context())).toBe(ALLOWED_UNTOUCHED);
  });
});

describe('validate', () => {
  it('allows a good Gateway with nothing to say', () => {
    expect(
      validateReview(request({ object: spec({ value: '10.96.0.10', routability: 'Cluster' }) }), context()),
    ).toEqual({ kind: 'allowed', warnings: [], auditAnnotations: {}, codes: [] });
  });

  it('denies with one field cause per violation, typed by its field-error type, and the codes once each', () => {
    const outcome = validateReview(
      request({ object: spec(OUTSIDE, { ...OUTSIDE, value: '192.168.0.2' }) }),
      context(),
    );
    expect(outcome.kind).toBe('denied');
    if (outcome.kind !== 'denied') return;
    expect(outcome.codes).toEqual(['ClusterAddressOutsideServiceRange']);
    expect(outcome.causes.map((c) => [c.field, c.reason])).toEqual([
      ['spec.addresses[0].value', 'FieldValueInvalid'],
      ['spec.addresses[1].value', 'FieldValueInvalid'],
    ]);
    // The cause's message is the field error without its field: the field is in `field`.
    for (const cause of outcome.causes) {
      expect(cause.message).toMatch(/^Invalid value: "192\.168\.0\.[12]": /);
      expect(outcome.message).toContain(`${cause.field}: ${cause.message}`);
    }
  });

  it('reads the stored object: an unchanged bad entry on UPDATE is ratcheted, not denied', () => {
    const gateway = spec(OUTSIDE);
    const created = validateReview(request({ object: gateway }), context());
    const updated = validateReview(
      request({ operation: 'UPDATE', object: gateway, oldObject: gateway }),
      context(),
    );
    expect(created.kind).toBe('denied');
    // Allowed with a warning that names the ratcheted finding; its code stays the finding's.
    expect(updated.kind).toBe('allowed');
    expect(updated.codes).toEqual(['ClusterAddressOutsideServiceRange']);
    expect(updated.warnings).toHaveLength(1);
  });

  it('carries a warning-only finding as a warning and a code of an allowed answer', () => {
    const outcome = validateReview(
      // A global address in a range that is not itself global (10.0.0.0/7 reaches 11.0.0.0/8).
      request({ object: spec({ type: 'IPAddress', value: '11.0.0.10', routability: 'Cluster' }) }),
      context({ ranges: ranges('10.0.0.0/7') }),
    );
    expect(outcome).toMatchObject({ kind: 'allowed', codes: ['ClusterAddressGloballyRoutable'] });
    expect(outcome.warnings).toHaveLength(1);
  });
});

describe('mutate', () => {
  it('leaves a spec write alone: it defaults status addresses only', () => {
    expect(mutateReview(request({ object: spec({ value: '10.96.0.10' }) }), context())).toEqual({
      kind: 'patched',
      patch: [],
      warnings: [],
      auditAnnotations: {},
      codes: [],
    });
  });

  it('defaults an unset status routability to External and counts it in an audit annotation', () => {
    const write = request({
      operation: 'UPDATE',
      subResource: 'status',
      object: status({ type: 'IPAddress', value: '203.0.113.1' }, { type: 'IPAddress', value: '10.96.0.10' }),
      oldObject: baseGateway(),
    });
    const outcome = mutateReview(write, context());
    expect(outcome).toMatchObject({
      kind: 'patched',
      patch: [
        { op: 'add', path: '/status/addresses/0/routability', value: 'External' },
        { op: 'add', path: '/status/addresses/1/routability', value: 'External' },
      ],
      auditAnnotations: { 'defaulted-routability': '2' },
      // The second lies in a service range: the controller is told what it claimed.
      codes: ['StatusDefaultedExternal'],
    });
    expect(outcome.warnings).toHaveLength(1);
  });

  it('defaults from the new object alone: the stored one does not change the patch', () => {
    const object = status({ type: 'IPAddress', value: '203.0.113.1' });
    const write = (oldObject: unknown) =>
      mutateReview(request({ operation: 'UPDATE', subResource: 'status', object, oldObject }), context());
    expect(write({ not: 'a gateway' })).toEqual(write(baseGateway()));
  });
});

describe('WEBHOOKS', () => {
  it('names each webhook by its path', () => {
    expect(WEBHOOKS).toEqual({ validate: validateReview, mutate: mutateReview });
  });
});
