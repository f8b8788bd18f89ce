/** One test per AdmissionReview protocol invariant, through the real app. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { baseGateway } from '../kit/gateways.js';
import { post, testApp } from '../kit/app.js';

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reviews', `${name}.json`), 'utf8'));
const { app, registry } = testApp();
afterAll(() => app.close());

describe('AdmissionReview protocol invariants', () => {
  it('echoes the request uid', async () => {
    const review = fixture('create-allowed');
    review.request.uid = 'a-very-specific-uid';
    expect((await post(app, '/validate', review)).json().response.uid).toBe('a-very-specific-uid');
  });

  it('echoes the admission API version it received (v1 and v1beta1)', async () => {
    expect((await post(app, '/validate', fixture('create-allowed'))).json().apiVersion).toBe(
      'admission.k8s.io/v1',
    );
    expect((await post(app, '/validate', fixture('v1beta1-review'))).json().apiVersion).toBe(
      'admission.k8s.io/v1beta1',
    );
    expect((await post(app, '/validate', fixture('v1beta1-review'))).json().kind).toBe('AdmissionReview');
  });

  it('sends patch and patchType together, and neither when there is nothing to patch', async () => {
    const patched = (await post(app, '/mutate', fixture('status-defaulting'))).json().response;
    expect(patched.patchType).toBe('JSONPatch');
    expect(JSON.parse(Buffer.from(patched.patch, 'base64').toString())).toEqual([
      { op: 'add', path: '/status/addresses/0/routability', value: 'External' },
      { op: 'add', path: '/status/addresses/1/routability', value: 'External' },
    ]);
    const untouched = (await post(app, '/mutate', fixture('create-allowed'))).json().response;
    expect(untouched).not.toHaveProperty('patch');
    expect(untouched).not.toHaveProperty('patchType');
  });

  it('never returns a patch from /validate', async () => {
    for (const name of ['status-defaulting', 'create-allowed', 'create-cluster-outside-range']) {
      const response = (await post(app, '/validate', fixture(name))).json().response;
      expect(response).not.toHaveProperty('patch');
      expect(response).not.toHaveProperty('patchType');
    }
  });

  it('denials are 403 Forbidden with the message and one cause per violation', async () => {
    const response = (await post(app, '/validate', fixture('create-several-violations'))).json().response;
    expect(response.allowed).toBe(false);
    expect(response.status.code).toBe(403);
    expect(response.status.reason).toBe('Forbidden');
    expect(response.status.message).not.toMatch(/denied the request/);
    expect(response.status.details.causes.map((c: { field: string }) => c.field)).toEqual([
      'spec.addresses[0].value',
      'spec.addresses[1].value',
    ]);
    expect(response.status.details.causes[0].reason).toBe('FieldValueInvalid');
  });

  it('keeps warnings on denials', async () => {
    // An unchanged entry that now fails (ratcheted: a warning) next to a changed one that fails (denied).
    const review = fixture('update-changed-entry');
    review.request.object.spec.addresses.push({ value: '10.200.0.5', routability: 'Cluster' });
    const denied = (await post(app, '/validate', review)).json().response;
    expect(denied.allowed).toBe(false);
    expect(denied.status.details.causes).toHaveLength(1);
    expect(denied.warnings).toEqual([
      'spec.addresses[1]: unchanged, so allowed, although now: Cluster address "10.200.0.5" is outside the service range',
    ]);
  });

  it('allows DELETE and CONNECT untouched', async () => {
    for (const operation of ['DELETE', 'CONNECT']) {
      const review = fixture('create-cluster-outside-range');
      review.request.operation = operation;
      const response = (await post(app, '/validate', review)).json().response;
      expect(response).toEqual({ uid: review.request.uid, allowed: true });
    }
  });

  it('allows non-Gateway kinds untouched on both webhooks', async () => {
    for (const webhook of ['/validate', '/mutate']) {
      const review = fixture('non-gateway-service');
      expect((await post(app, webhook, review)).json().response).toEqual({
        uid: review.request.uid,
        allowed: true,
      });
    }
  });

  it('answers 400 with a short JSON error for a body that is no AdmissionReview, and keeps serving', async () => {
    for (const body of [
      '{}',
      '[]',
      '"x"',
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }),
    ]) {
      const res = await post(app, '/validate', body);
      expect(res.status).toBe(400);
      expect(res.json().error).toMatch(/^not an AdmissionReview: /);
    }
    const uidNumber = fixture('create-allowed');
    uidNumber.request.uid = 5;
    expect((await post(app, '/validate', uidNumber)).status).toBe(400);
    expect((await post(app, '/validate', fixture('create-allowed'))).status).toBe(200);
  });

  it('answers 503 while the service ranges are unknown', async () => {
    const { app: notReady } = testApp({
      sources: {
        ranges: {
          current: () => undefined,
          readiness: () => ({ ready: false, reason: 'waiting for the first list of ServiceCIDRs' }),
          describe: () => ({}),
          close: async () => {},
        },
        allocatedIPs: undefined,
        close: async () => {},
      },
    });
    const res = await post(notReady, '/validate', fixture('create-allowed'));
    await notReady.close();
    expect(res.status).toBe(503);
    expect(res.json().error).toBe('not ready: waiting for the first list of ServiceCIDRs');
  });

  it('unknown paths are 404', async () => {
    expect((await app.inject({ method: 'GET', url: '/validate' })).statusCode).toBe(404);
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/other',
          payload: '{}',
          headers: { 'content-type': 'application/json' },
        })
      ).statusCode,
    ).toBe(404);
  });

  it('counts requests and violations in metrics', async () => {
    await post(app, '/validate', fixture('create-case-slip'));
    const text = await registry.metrics();
    expect(text).toMatch(
      /routability_webhook_requests_total\{webhook="validate",operation="CREATE",outcome="denied",code="200"\} [1-9]/,
    );
    expect(text).toMatch(/routability_webhook_violations_total\{rule="RoutabilityUnsupported"\} [1-9]/);
  });

  it('hostile object shapes are answered, not thrown', async () => {
    const review = fixture('create-allowed');
    review.request.object = JSON.parse(
      '{"__proto__":{"spec":1},"constructor":{"prototype":{}},"spec":{"addresses":[{"__proto__":{"routability":"Cluster"},"value":"10.0.0.5"}]}}',
    );
    const res = await post(app, '/validate', JSON.stringify(review));
    expect(res.status).toBe(200);
    expect(res.json().response.allowed).toBe(true);
    review.request.object = baseGateway({ spec: [{ routability: { nested: true } }] });
    expect((await post(app, '/validate', review)).json().response.allowed).toBe(false);
  });
});
