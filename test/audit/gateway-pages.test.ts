/**
 * The Gateway pages of an audit pass (src/audit/gateway-pages.ts) against a
 * stand-in kube client: what each page request asks for, which answers end
 * the list, and when an expired continue token restarts the pass (once, and
 * only with a token). pass.test.ts lists through the fake API server.
 */
import { describe, expect, it } from 'vitest';
import { gatewayPageFetcher, gatewayPages, type FetchGatewayPage } from '../../src/audit/gateway-pages.js';
import type { KubeClient } from '../../src/kube/client.js';

function client(answers: unknown[]) {
  const asked: unknown[] = [];
  const kube = {
    json: (request: Record<string, unknown>) => {
      // The answer's parser (a list split into its items) is the client's business, not compared here.
      const { parse: _parse, ...rest } = request;
      asked.push(rest);
      return Promise.resolve(answers.shift());
    },
  } as unknown as KubeClient;
  return { kube, asked };
}

const expired = () => Object.assign(new Error('continue token expired'), { code: 410 });

async function all(fetch: FetchGatewayPage): Promise<unknown[]> {
  const seen: unknown[] = [];
  for await (const page of gatewayPages(fetch)) seen.push(...page.items);
  return seen;
}

describe('gatewayPageFetcher', () => {
  it('asks for one page of the namespace (or all) with limit, continue, timeout and what it is for', async () => {
    const { kube, asked } = client([{ items: [1], metadata: { continue: 'next' } }, { items: [] }]);
    const fetch = gatewayPageFetcher(kube, { namespace: 'a b', pageSize: 7, timeoutMs: 1234 });
    expect(await fetch(undefined)).toEqual({ items: [1], continueToken: 'next' });
    expect(await fetch('next')).toEqual({ items: [], continueToken: undefined });
    expect(asked).toEqual([
      {
        path: '/apis/gateway.networking.k8s.io/v1/namespaces/a%20b/gateways',
        query: { limit: '7' },
        timeoutMs: 1234,
        what: 'list Gateways',
      },
      {
        path: '/apis/gateway.networking.k8s.io/v1/namespaces/a%20b/gateways',
        query: { limit: '7', continue: 'next' },
        timeoutMs: 1234,
        what: 'list Gateways',
      },
    ]);
    const everywhere = client([{ items: [] }]);
    await gatewayPageFetcher(everywhere.kube, { pageSize: 1, timeoutMs: 1 })(undefined);
    expect(everywhere.asked).toEqual([
      {
        path: '/apis/gateway.networking.k8s.io/v1/gateways',
        query: { limit: '1' },
        timeoutMs: 1,
        what: 'list Gateways',
      },
    ]);
  });

  it('ends the list at an empty or missing continue token, or one that is not a string', async () => {
    for (const metadata of [{ continue: '' }, {}, { continue: 5 }, undefined]) {
      const { kube } = client([{ items: [], metadata }]);
      expect(
        (await gatewayPageFetcher(kube, { pageSize: 1, timeoutMs: 1 })(undefined)).continueToken,
      ).toBeUndefined();
    }
  });

  it('refuses an answer without an items array: not an empty page', async () => {
    for (const body of [{}, { items: 'x' }, { items: null }]) {
      const { kube } = client([body]);
      await expect(gatewayPageFetcher(kube, { pageSize: 1, timeoutMs: 1 })(undefined)).rejects.toMatchObject({
        message: 'the Gateway list answer has no items array',
        reason: 'not-a-list',
      });
    }
  });
});

describe('gatewayPages restarts', () => {
  it('a 410 on the first page (no token yet) is an error, not a restart', async () => {
    let calls = 0;
    const fetch: FetchGatewayPage = () => (calls++, Promise.reject(expired()));
    await expect(all(fetch)).rejects.toThrow(/listing Gateways/);
    expect(calls).toBe(1);
  });

  it('a second expiry in the same pass is an error', async () => {
    const tokens: (string | undefined)[] = [];
    const fetch: FetchGatewayPage = (token) => {
      tokens.push(token);
      // A pass that restarted on and on would end here, failing the count below.
      if (tokens.length > 8) return Promise.reject(new Error('too many requests'));
      return token === undefined
        ? Promise.resolve({ items: [1], continueToken: 'a' })
        : Promise.reject(expired());
    };
    await expect(all(fetch)).rejects.toThrow(/listing Gateways/);
    expect(tokens).toEqual([undefined, 'a', undefined, 'a']);
  });

  it('another failure with a token is an error, not a restart', async () => {
    const tokens: (string | undefined)[] = [];
    const fetch: FetchGatewayPage = (token) => {
      tokens.push(token);
      return token === undefined
        ? Promise.resolve({ items: [1], continueToken: 'a' })
        : Promise.reject(Object.assign(new Error('boom'), { code: 500 }));
    };
    await expect(all(fetch)).rejects.toThrow(/listing Gateways/);
    expect(tokens).toEqual([undefined, 'a']);
  });
});
