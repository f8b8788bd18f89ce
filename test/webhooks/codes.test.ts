/**
 * The rule codes an Outcome carries (for the log line and the findings
 * counter): each code once, in the order its first finding came, from every
 * kind of finding; none for a review without findings.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AdmissionRequest } from '../../src/admission/review.js';
import { staticSources } from '../../src/inputs/ranges/static-source.js';
import { ruleInputs } from '../../src/inputs/rule-inputs.js';
import { mutateReview, validateReview } from '../../src/webhooks/gateway.js';
import { FIXTURE_SETTINGS } from '../kit/app.js';
import { DUAL_STACK } from '../kit/gateways.js';
import { defaultGateway, gatewayReview } from '../kit/reviews.js';

const ctx = ruleInputs({ settings: FIXTURE_SETTINGS, sources: staticSources(DUAL_STACK, 'test') }).current()!
  .ctx;
const request = (name: string) =>
  (
    JSON.parse(
      readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reviews', `${name}.json`), 'utf8'),
    ) as {
      request: AdmissionRequest;
    }
  ).request;

describe('the codes of an outcome', () => {
  it('several findings of one code give it once, in the order of the first findings', () => {
    const addresses = [
      { type: 'IPAddress', value: '10.0.0.5', routability: 'Cluster' },
      { type: 'IPAddress', value: '10.96.0.9', routability: 'External' },
      { type: 'IPAddress', value: '10.0.0.6', routability: 'Cluster' },
      { type: 'IPAddress', value: '10.96.0.10', routability: 'External' },
    ];
    const review = gatewayReview({ uid: 'u', object: defaultGateway(addresses) }).request as AdmissionRequest;
    const outcome = validateReview(review, ctx);
    expect(outcome.kind === 'denied' ? outcome.causes.length : 0).toBe(4);
    expect(outcome.codes).toEqual(['ClusterAddressOutsideServiceRange', 'ExternalAddressInsideServiceRange']);
    // Each fixture's codes are the distinct codes of its causes, first seen first.
    const several = validateReview(request('create-several-violations'), ctx);
    expect(several.kind === 'denied' && several.codes.length).toBe(2);
  });

  it('warned and ratcheted findings count; a review without findings has none', () => {
    expect(validateReview(request('update-ratcheted'), ctx).codes.length).toBeGreaterThan(0);
    expect(validateReview(request('create-allowed'), ctx).codes).toEqual([]);
    expect(mutateReview(request('create-allowed'), ctx).codes).toEqual([]);
  });

  it('the notices of a defaulting patch, once each', () => {
    const outcome = mutateReview(request('status-dishonest-cluster'), ctx);
    expect(outcome.codes).toEqual([...new Set(outcome.codes)]);
  });
});
