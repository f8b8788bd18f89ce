/**
 * The API server's errors in words (src/kube/errors.ts): Retry-After read as
 * seconds or a date and capped, the status of any error shape, one line of a
 * message, a status with its hint and the server's own message, a short
 * status for verdict warnings, and a promise with a deadline.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  BadAnswerError,
  describeKubeError,
  httpStatusOf,
  KubeApiError,
  MAX_RETRY_AFTER_MS,
  oneLine,
  parseRetryAfter,
  retryAfterWait,
  shortStatus,
  withTimeout,
} from '../../src/kube/errors.js';

const NOW = Date.parse('2026-12-04T12:00:00Z');

describe('Retry-After', () => {
  it.each([
    { value: undefined, ms: undefined },
    { value: '', ms: undefined },
    { value: '   ', ms: undefined },
    { value: '0', ms: 0 },
    { value: '7', ms: 7_000 },
    { value: ' 7 ', ms: 7_000 },
    { value: '7s', ms: undefined },
    { value: 'Fri, 04 Dec 2026 12:00:30 GMT', ms: 30_000 },
    { value: 'Fri, 04 Dec 2026 11:00:00 GMT', ms: 0 },
    { value: 'soon', ms: undefined },
  ])('$value: $ms ms', (t) => {
    expect(parseRetryAfter(t.value, NOW)).toBe(t.ms);
  });

  it('a KubeApiError carries it from now; a wait is capped at 5 minutes, 0 for anything else', () => {
    const err = new KubeApiError({ statusCode: 429, body: 'b', what: 'GET /x', retryAfter: '3', now: NOW });
    expect(err).toMatchObject({
      name: 'KubeApiError',
      message: 'GET /x: HTTP 429',
      statusCode: 429,
      body: 'b',
    });
    expect(err.retryAfterMs).toBe(3_000);
    expect(retryAfterWait(err)).toBe(3_000);
    const long = new KubeApiError({ statusCode: 503, body: '', what: 'x', retryAfter: '3600' });
    expect(MAX_RETRY_AFTER_MS).toBe(300_000);
    expect(retryAfterWait(long)).toBe(300_000);
    expect(retryAfterWait(new KubeApiError({ statusCode: 503, body: '', what: 'x' }))).toBe(0);
    expect(retryAfterWait(new Error('x'))).toBe(0);
    // Dates are read against the clock when no `now` is given.
    vi.useFakeTimers({ now: NOW });
    try {
      const dated = new KubeApiError({
        statusCode: 429,
        body: '',
        what: 'x',
        retryAfter: 'Fri, 04 Dec 2026 12:00:10 GMT',
      });
      expect(dated.retryAfterMs).toBe(10_000);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('httpStatusOf and oneLine', () => {
  it.each([
    { what: 'statusCode', err: { statusCode: 404 }, status: 404 },
    { what: 'code (ApiException)', err: { code: 409 }, status: 409 },
    { what: 'both: statusCode first', err: { statusCode: 500, code: 400 }, status: 500 },
    { what: 'a string code (a network error)', err: { code: 'ECONNRESET' }, status: undefined },
    { what: 'a string statusCode', err: { statusCode: '404' }, status: undefined },
    { what: 'nothing', err: undefined, status: undefined },
    { what: 'a string', err: 'x', status: undefined },
  ])('$what', (t) => {
    expect(httpStatusOf(t.err)).toBe(t.status);
  });

  it('one line, at most 300 characters; an empty message reads as unknown', () => {
    expect(oneLine(new Error('first\nsecond'))).toBe('first');
    expect(oneLine(new Error('x'.repeat(400)))).toBe('x'.repeat(300));
    expect(oneLine(new Error(''))).toBe('unknown error');
  });
});

describe('describeKubeError', () => {
  const answer = (statusCode: number, body: string) => new KubeApiError({ statusCode, body, what: 'GET /x' });
  it.each([
    { status: 401, hint: ' (unauthorized: the credentials were rejected)' },
    { status: 403, hint: ' (forbidden: the service account lacks permission)' },
    { status: 404, hint: ' (not found: the API is not served)' },
    { status: 410, hint: ' (gone: the resource version is too old)' },
    { status: 429, hint: ' (too many requests: the API server asks to retry later)' },
    { status: 500, hint: ' (the API server failed)' },
    { status: 599, hint: ' (the API server failed)' },
    { status: 499, hint: '' },
    { status: 600, hint: '' },
    { status: 409, hint: '' },
  ])('HTTP $status with its hint', (t) => {
    expect(describeKubeError(answer(t.status, ''))).toBe(`HTTP ${t.status}${t.hint}`);
  });

  it.each([
    {
      what: "a Status's message",
      body: '{"kind":"Status","message":"leases is forbidden"}',
      detail: 'leases is forbidden',
    },
    { what: 'an empty message', body: '{"kind":"Status","message":""}', detail: undefined },
    { what: 'a message that is not text', body: '{"message":7}', detail: undefined },
    { what: 'a text body, trimmed', body: '  a proxy said no  \n', detail: 'a proxy said no' },
    { what: 'a long text body, cut at 200', body: 'y'.repeat(300), detail: 'y'.repeat(200) },
    { what: 'a blank body', body: '   ', detail: undefined },
  ])('with $what', (t) => {
    expect(describeKubeError(answer(409, t.body))).toBe(
      t.detail === undefined ? 'HTTP 409' : `HTTP 409: ${t.detail}`,
    );
  });

  it("a body that is already an object (client-node's errors)", () => {
    expect(describeKubeError({ statusCode: 403, body: { message: 'no' } })).toBe(
      'HTTP 403 (forbidden: the service account lacks permission): no',
    );
  });

  it('a network error by its first line, with its code unless the message has it; anything else as text', () => {
    const reset = Object.assign(new Error('socket hang up\nmore'), { code: 'ECONNRESET' });
    expect(describeKubeError(reset)).toBe('socket hang up (ECONNRESET)');
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(describeKubeError(refused)).toBe('connect ECONNREFUSED 127.0.0.1:1');
    expect(describeKubeError(new BadAnswerError('not-json', 'GET /x: the answer is not JSON'))).toBe(
      'GET /x: the answer is not JSON',
    );
    expect(describeKubeError('plain')).toBe('plain');
  });
});

describe('shortStatus', () => {
  it.each([
    { status: 401, needs: undefined, text: 'HTTP 401 (credentials rejected)' },
    {
      status: 403,
      needs: { verb: 'get', resource: 'ipaddresses' },
      text: 'HTTP 403 (forbidden: needs get on ipaddresses)',
    },
    { status: 403, needs: undefined, text: 'HTTP 403 from the API server' },
    { status: 500, needs: { verb: 'get', resource: 'ipaddresses' }, text: 'HTTP 500 from the API server' },
  ])('$status', (t) => {
    expect(shortStatus(t.status, t.needs)).toBe(t.text);
  });
});

describe('withTimeout', () => {
  it('the answer when it comes in time; else rejects after the time, naming it in seconds', async () => {
    await expect(withTimeout(Promise.resolve(1), 1_000, 'x')).resolves.toBe(1);
    vi.useFakeTimers();
    try {
      const never = withTimeout(new Promise(() => undefined), 1_500, 'the lookup');
      const settled = vi.fn();
      never.catch(settled);
      await vi.advanceTimersByTimeAsync(1_499);
      expect(settled).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      await expect(never).rejects.toThrow('the lookup: no answer within 1.5 s');
      // The timer is cleared once the promise settles.
      await withTimeout(Promise.resolve(2), 1_000, 'y');
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
