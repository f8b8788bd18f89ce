/**
 * The admission routes name who a review's allocated-IP lookups are for (its
 * namespace and requesting user), so that the lookups get that requester's
 * fair share and one flooding tenant cannot use up another's.
 */
import { describe, expect, it } from 'vitest';
import { staticSources } from '../../src/inputs/ranges/static-source.js';
import type { Requester } from '../../src/inputs/allocations/ip-lookup-slots.js';
import type { ClusterSources } from '../../src/inputs/ranges/types.js';
import { DUAL_STACK } from '../kit/gateways.js';
import { post, testApp } from '../kit/app.js';
import { defaultGateway, gatewayReview } from '../kit/reviews.js';

function recordingSources() {
  const asked: { ips: readonly string[]; requester: Requester | undefined }[] = [];
  const base = staticSources(DUAL_STACK, 'test');
  const sources: ClusterSources = {
    ...base,
    allocatedIPs: {
      lookup: (ips, requester) => {
        asked.push({ ips, requester });
        return Promise.resolve({ holderOf: () => undefined });
      },
      describe: () => ({}),
      close: () => Promise.resolve(),
    },
  };
  return { sources, asked };
}

describe('allocated-IP lookups carry the review requester', () => {
  it.each([
    [
      'namespace and user',
      { namespace: 'apps', userInfo: { username: 'alice' } },
      { namespace: 'apps', user: 'alice' },
    ],
    ['no user name', { namespace: 'apps', userInfo: {} }, { namespace: 'apps', user: '' }],
    ['no userInfo', { namespace: 'apps', userInfo: undefined }, { namespace: 'apps', user: '' }],
  ])('%s', async (_name, who, expected) => {
    const { sources, asked } = recordingSources();
    const { app } = testApp({ sources });
    const review = gatewayReview({
      uid: 'u1',
      object: defaultGateway([{ type: 'IPAddress', value: '10.96.0.20', routability: 'Cluster' }]),
    });
    const request: Record<string, unknown> = { ...review.request, ...who };
    if (who.userInfo === undefined) delete request['userInfo'];
    const res = await post(app, '/validate', { ...review, request });
    expect(res.status).toBe(200);
    expect(asked).toEqual([{ ips: ['10.96.0.20'], requester: expected }]);
  });

  it('a userInfo that is not an object is not an AdmissionReview', async () => {
    const { sources } = recordingSources();
    const { app } = testApp({ sources });
    const review = gatewayReview({ uid: 'u2', object: defaultGateway([]) });
    const res = await post(app, '/validate', {
      ...review,
      request: { ...review.request, userInfo: 'alice' },
    });
    expect(res.status).toBe(400);
  });
});
