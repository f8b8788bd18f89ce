/**
 * The AdmissionReview envelope decoder on its own: the one-line reason it
 * gives for each kind of broken envelope, and the uid it still recovers for the
 * log line. The property tests (test/rules/properties.test.ts) show that
 * random JSON is refused and well-formed envelopes pass; these pin the text
 * and the uid a refused review leaves behind.
 */
import { describe, expect, it } from 'vitest';
import { createReviewDecoder } from '../../src/admission/decode.js';

/** A decoder per call: built inside each test, so its options are seen by the mutation run too. */
const decode = (body: unknown) => createReviewDecoder()(body);

const REQUEST = {
  uid: 'abc',
  kind: { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' },
  resource: { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways' },
  operation: 'CREATE',
};
const envelope = (request: unknown) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request,
});

describe('the envelope decoder', () => {
  it('decodes a minimal envelope of either version to its request', () => {
    for (const apiVersion of ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1']) {
      const decoded = decode({ ...envelope(REQUEST), apiVersion });
      expect(decoded).toEqual({ ok: true, version: apiVersion, request: REQUEST });
    }
  });

  it.each([
    ['a string', 'x', 'review must be object'],
    ['a list', [], 'review must be object'],
    ['null', null, 'review must be object'],
    [
      'an envelope without apiVersion',
      { kind: 'AdmissionReview' },
      "review must have required property 'apiVersion'",
    ],
    ['a request that is a string', envelope('s'), 'request must be object'],
    [
      'a uid that is a number (never coerced to "5")',
      envelope({ ...REQUEST, uid: 5 }),
      'request.uid must be string',
    ],
    ['an empty uid', envelope({ ...REQUEST, uid: '' }), 'request.uid must NOT have fewer than 1 characters'],
  ])('refuses %s with its reason and no uid', (_what, body, reason) => {
    const decoded = decode(body);
    expect(decoded).toEqual({ ok: false, error: `not an AdmissionReview: ${reason}` });
    expect(decoded).not.toHaveProperty('uid');
  });

  it.each([
    [
      'an unknown operation',
      { operation: 'PATCH' },
      'request.operation must be equal to one of the allowed values',
    ],
    [
      'a kind without version',
      { kind: { group: 'g', kind: 'Gateway' } },
      "request.kind must have required property 'version'",
    ],
    [
      'a resource without resource',
      { resource: { group: 'g', version: 'v1' } },
      "request.resource must have required property 'resource'",
    ],
    ['a dryRun that is a string', { dryRun: 'true' }, 'request.dryRun must be boolean'],
    ['a namespace that is a number', { namespace: 7 }, 'request.namespace must be string'],
  ])('refuses %s, naming the field, and keeps the uid for the log line', (_what, change, reason) => {
    expect(decode(envelope({ ...REQUEST, ...change }))).toEqual({
      ok: false,
      error: `not an AdmissionReview: ${reason}`,
      uid: 'abc',
    });
  });

  it('refuses an unknown apiVersion or kind of the envelope, keeping the uid', () => {
    expect(decode({ ...envelope(REQUEST), apiVersion: 'admission.k8s.io/v2' })).toEqual({
      ok: false,
      error: 'not an AdmissionReview: apiVersion must be equal to one of the allowed values',
      uid: 'abc',
    });
    expect(decode({ ...envelope(REQUEST), kind: 'ConversionReview' })).toEqual({
      ok: false,
      error: 'not an AdmissionReview: kind must be equal to constant',
      uid: 'abc',
    });
  });

  it('refuses a uid longer than 128 characters and keeps only its first 128 for the log line', () => {
    const long = `${'u'.repeat(128)}${'v'.repeat(72)}`;
    const decoded = decode(envelope({ ...REQUEST, uid: long }));
    expect(decoded).toEqual({
      ok: false,
      error: 'not an AdmissionReview: request.uid must NOT have more than 128 characters',
      uid: 'u'.repeat(128),
    });
  });

  it('recovers no uid from an inherited or non-string uid', () => {
    const inherited = Object.create({ uid: 'from-prototype' }) as Record<string, unknown>;
    const decoded = decode(envelope(Object.assign(inherited, { operation: 'PATCH' })));
    expect(decoded.ok).toBe(false);
    expect(decoded).not.toHaveProperty('uid');
    expect(decode(envelope({ ...REQUEST, uid: ['abc'] }))).not.toHaveProperty('uid');
  });
});
