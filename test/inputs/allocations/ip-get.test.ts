/**
 * One IPAddress GET and how its answer is read: which answer means held,
 * free, an unserved API or an error, and the request the getter sends
 * (a fake client records it: no HTTP).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  holderFromIPAddress,
  interpretAnswer,
  ipAddressGetter,
  isObjectNotFound,
} from '../../../src/inputs/allocations/ip-get.js';
import type { KubeAnswer, KubeClient, KubeRequest } from '../../../src/kube/client.js';

afterEach(() => {
  vi.useRealTimers();
});

const notFound = (details: unknown, reason = 'NotFound') =>
  JSON.stringify({ kind: 'Status', status: 'Failure', reason, details, code: 404 });

describe('isObjectNotFound', () => {
  it.each([
    ['a NotFound Status naming the object', notFound({ name: '10.0.0.1', kind: 'ipaddresses' }), true],
    ['a NotFound Status naming another object', notFound({ name: '10.0.0.2' }), false],
    ['a NotFound Status naming nothing (unserved API)', notFound({}), false],
    ['a NotFound Status without details', JSON.stringify({ kind: 'Status', reason: 'NotFound' }), false],
    ['another reason naming the object', notFound({ name: '10.0.0.1' }, 'Forbidden'), false],
    ['a plain-text 404 page', '404 page not found', false],
    ['JSON null', 'null', false],
  ])('%s: %s', (_what, body, expected) => {
    expect(isObjectNotFound(body, '10.0.0.1')).toBe(expected);
  });
});

describe('holderFromIPAddress', () => {
  const withRef = (parentRef: unknown) => ({ metadata: { name: '10.0.0.1' }, spec: { parentRef } });

  it.each([
    [
      'a Service (core group: no group field)',
      withRef({ resource: 'services', namespace: 'a', name: 's' }),
      { group: '', resource: 'services', namespace: 'a', name: 's' },
    ],
    [
      'a Gateway, with its group',
      withRef({ group: 'gateway.networking.k8s.io', resource: 'gateways', namespace: 'b', name: 'gw' }),
      { group: 'gateway.networking.k8s.io', resource: 'gateways', namespace: 'b', name: 'gw' },
    ],
    [
      'a cluster-scoped parent (no namespace)',
      withRef({ group: 'example.io', resource: 'pools', name: 'p' }),
      { group: 'example.io', resource: 'pools', namespace: '', name: 'p' },
    ],
    [
      'non-string group and namespace read as absent',
      withRef({ group: 7, resource: 'services', namespace: ['a'], name: 's' }),
      { group: '', resource: 'services', namespace: '', name: 's' },
    ],
  ])('names %s', (_what, object, holder) => {
    expect(holderFromIPAddress(object)).toEqual(holder);
  });

  it.each([
    ['no resource', withRef({ namespace: 'a', name: 's' })],
    ['no name', withRef({ resource: 'services', namespace: 'a' })],
    ['a non-string resource', withRef({ resource: 1, name: 's' })],
    ['a non-string name', withRef({ resource: 'services', name: { n: 's' } })],
    ['no parentRef', { spec: {} }],
    ['no spec', { metadata: { name: '10.0.0.1' } }],
    ['not an object', 'services/a/s'],
  ])('names nobody for %s', (_what, object) => {
    expect(holderFromIPAddress(object)).toBeUndefined();
  });
});

describe('interpretAnswer', () => {
  it('an unreadable 200 is an error saying so, not a holder', () => {
    expect(interpretAnswer('10.0.0.1', 200, '{"spec":')).toEqual({
      kind: 'error',
      reason: 'unreadable answer from the API server',
      detail: 'invalid JSON',
    });
  });

  it('an IPAddress whose parentRef names nobody is held by the IPAddress itself', () => {
    const body = JSON.stringify({
      metadata: { name: 'fd00::1' },
      spec: { parentRef: { resource: 'services' } },
    });
    expect(interpretAnswer('fd00::1', 200, body)).toEqual({
      kind: 'held',
      holder: { group: 'networking.k8s.io', resource: 'ipaddresses', namespace: '', name: 'fd00::1' },
    });
  });

  it('a 404 is free only when it names the address asked about', () => {
    expect(interpretAnswer('10.0.0.1', 404, notFound({ name: '10.0.0.1' }))).toEqual({ kind: 'free' });
    expect(interpretAnswer('10.0.0.1', 404, notFound({ name: '10.0.0.9' }))).toEqual({ kind: 'absent' });
  });

  it.each([
    [401, 'HTTP 401 (credentials rejected)'],
    [403, 'HTTP 403 (forbidden: needs get on ipaddresses)'],
    [500, 'HTTP 500 from the API server'],
    [503, 'HTTP 503 from the API server'],
  ])('HTTP %i is an error with the reason "%s" and the body as detail', (status, reason) => {
    const result = interpretAnswer('10.0.0.1', status, 'the body');
    // No Retry-After: no wait asked for, so the key is left out altogether.
    expect(result).toStrictEqual({ kind: 'error', reason, detail: 'the body' });
  });

  it('keeps the first 300 characters of an error body as its detail', () => {
    const body = 'x'.repeat(300) + 'TAIL';
    const result = interpretAnswer('10.0.0.1', 500, body);
    expect(result).toMatchObject({ kind: 'error', detail: 'x'.repeat(300) });
  });

  it.each([
    ['delta-seconds', '3', 3_000],
    ['zero seconds', '0', 0],
    ['more than the cap', '86400', 300_000],
  ])('a Retry-After in %s is the wait asked for, at most 5 minutes', (_what, header, wait) => {
    expect(interpretAnswer('10.0.0.1', 429, '', header)).toMatchObject({ kind: 'error', retryAfterMs: wait });
  });

  it('a Retry-After as an HTTP date is the time left until then', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const result = interpretAnswer('10.0.0.1', 503, '', 'Thu, 01 Jan 2026 00:00:20 GMT');
    expect(result).toMatchObject({ kind: 'error', retryAfterMs: 20_000 });
  });

  it('an unreadable Retry-After asks for no wait', () => {
    expect(interpretAnswer('10.0.0.1', 429, '', 'soon')).not.toHaveProperty('retryAfterMs');
  });
});

describe('ipAddressGetter', () => {
  function fakeClient(answer: KubeAnswer) {
    const sent: KubeRequest[] = [];
    let closed = 0;
    const client = {
      send: (request: KubeRequest) => {
        sent.push(request);
        return Promise.resolve(answer);
      },
      close: () => {
        closed++;
      },
    } as unknown as KubeClient;
    return { client, sent, closed: () => closed };
  }

  it('GETs the object named by the address, from the watch cache, bounded in size and time', async () => {
    const { client, sent } = fakeClient({
      status: 404,
      text: notFound({ name: 'fd00::a' }),
      retryAfter: undefined,
    });
    const signal = new AbortController().signal;
    const result = await ipAddressGetter(client, 2_500).get('fd00::a', signal);
    expect(result).toEqual({ kind: 'free' });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toEqual({
      // The colons of an IPv6 name are escaped in the path.
      path: '/apis/networking.k8s.io/v1/ipaddresses/fd00%3A%3Aa',
      query: { resourceVersion: '0' },
      maxBodyBytes: 64 * 1024,
      timeoutMs: 2_500,
      signal,
      what: 'GET ipaddresses/fd00::a',
    });
    expect(sent[0]!.signal).toBe(signal);
  });

  it('reads the answer, Retry-After included', async () => {
    const { client } = fakeClient({ status: 429, text: 'slow down', retryAfter: '2' });
    const result = await ipAddressGetter(client, 1_000).get('10.0.0.1', new AbortController().signal);
    expect(result).toEqual({
      kind: 'error',
      reason: 'HTTP 429 from the API server',
      detail: 'slow down',
      retryAfterMs: 2_000,
    });
  });

  it('close() closes the client', () => {
    const fake = fakeClient({ status: 200, text: '{}', retryAfter: undefined });
    ipAddressGetter(fake.client, 1_000).close();
    expect(fake.closed()).toBe(1);
  });
});
