/**
 * The app's transport (src/http/app.ts) in process: the listener's timeouts,
 * how long a body waits for room in the budget (half the apiserver's
 * `?timeout=`, at most 5 s), the refusal of other content types, the 404
 * text, `Connection: close` during shutdown, and the 400/431 a client gets
 * when Node's parser refuses its request. https-server.test.ts and the
 * reliability suites see these through the built server.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { staticSources } from '../../src/inputs/ranges/static-source.js';
import { buildApp, httpsServerOptions, transportOptions } from '../../src/http/app.js';
import type { BodyBudget } from '../../src/http/body-budget.js';
import { createServerMetrics } from '../../src/http/metrics.js';
import { TLS_POLICY } from '../../src/http/tls.js';
import { ruleInputs } from '../../src/inputs/rule-inputs.js';
import { FIXTURE_SETTINGS } from '../kit/app.js';
import { DUAL_STACK } from '../kit/gateways.js';
import { sleep } from '../kit/eventually.js';

function app(
  over: { bodyBudget?: BodyBudget; closing?: () => boolean; config?: { maxBodyBytes: number } } = {},
) {
  return buildApp({
    config: FIXTURE_SETTINGS,
    logger: pino({ level: 'silent' }),
    inputs: ruleInputs({ settings: FIXTURE_SETTINGS, sources: staticSources(DUAL_STACK, 'test') }),
    metrics: createServerMetrics(new Registry()),
    ...over,
  });
}

const apps: ReturnType<typeof app>[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

describe('the listener options', () => {
  it("outwait the apiserver's idle connections, bound a request and its headers, and leave closing to the guard", () => {
    const options = transportOptions(1234, undefined);
    expect(options).toMatchObject({
      keepAliveTimeout: 120_000,
      requestTimeout: 30_000,
      return503OnClosing: false,
      forceCloseConnections: false,
      bodyLimit: 1234,
    });
    expect(options).not.toHaveProperty('https');
  });

  it('add the TLS policy and the handshake, header and checking timeouts to the TLS options', () => {
    const https = httpsServerOptions({ cert: 'c', key: 'k' });
    expect(https).toEqual({
      cert: 'c',
      key: 'k',
      ...TLS_POLICY,
      headersTimeout: 10_000,
      handshakeTimeout: 32_000,
      connectionsCheckingInterval: 1_000,
    });
    expect(transportOptions(1, { cert: 'c', key: 'k' }).https).toEqual(https);
  });
});

describe('the body reader in the app', () => {
  /** A budget that is always full: records what each request asked for and refuses at once. */
  function fullBudget() {
    const asked: [bytes: number, waitMs: number][] = [];
    const budget: BodyBudget = {
      tryAcquire: () => undefined,
      acquire: (bytes, waitMs, grant) => {
        asked.push([bytes, waitMs]);
        grant(undefined);
      },
      inFlight: () => 0,
      waiting: () => 0,
    };
    return { budget, asked };
  }

  it("waits for room half the apiserver's ?timeout=, at most 5 s, then answers 429 with Retry-After", async () => {
    const { budget, asked } = fullBudget();
    const a = app({ bodyBudget: budget });
    apps.push(a);
    const body = '{"x":1}';
    for (const query of ['', '?timeout=10s', '?timeout=4s', '?timeout=30s', '?timeout=1s', '?timeout=bad']) {
      const res = await a.inject({
        method: 'POST',
        url: `/validate${query}`,
        headers: { 'content-type': 'application/json' },
        payload: body,
      });
      expect([res.statusCode, res.headers['retry-after'], res.json()]).toEqual([
        429,
        '1',
        { error: 'too many request bodies in flight; retry' },
      ]);
    }
    expect(asked).toEqual([
      [7, 5_000],
      [7, 5_000],
      [7, 2_000],
      [7, 5_000],
      [7, 500],
      [7, 5_000],
    ]);
  });

  it('reserves the largest allowed body for a body sent without a length', async () => {
    const { budget, asked } = fullBudget();
    const a = app({ bodyBudget: budget });
    apps.push(a);
    const res = await a.inject({
      method: 'POST',
      url: '/validate',
      headers: { 'content-type': 'application/json' },
      payload: Readable.from([Buffer.from('{"x":1}')]),
    });
    expect(res.statusCode).toBe(429);
    expect(asked).toEqual([[FIXTURE_SETTINGS.maxBodyBytes, 5_000]]);
  });

  it.each([
    ['100 bytes', 100, 'ended', 'answered'],
    ['64 MiB', 64 * 1024 * 1024, 'ended', 'answered'],
    ['64 MiB and 1 byte', 64 * 1024 * 1024 + 1, 'answered', 'ended'],
  ])(
    'discards %s past the limit to the end of the body before the 413, at most 64 MiB',
    async (_, more, first, second) => {
      const a = app({ config: { maxBodyBytes: 16 } });
      apps.push(a);
      await a.listen({ port: 0, host: '127.0.0.1' });
      const port = (a.server.address() as { port: number }).port;
      const events: string[] = [];
      const request = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/validate',
        headers: { 'content-type': 'application/json' },
      });
      request.on('error', () => {});
      const answer = new Promise<{ statusCode: number; json: () => unknown }>((resolve) =>
        request.on('response', (res) => {
          events.push('answered');
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ statusCode: res.statusCode!, json: () => JSON.parse(text) }));
        }),
      );
      // The first 17 bytes pass the limit; what follows is discarded.
      request.write(Buffer.alloc(17, 0x20));
      request.write(Buffer.alloc(more, 0x20));
      // A body cut off is answered without waiting for its end (a test that times out
      // if not); one read to its end is not answered for the 500 ms the test waits.
      if (first === 'answered') await answer;
      else await sleep(500);
      events.push('ended');
      request.end();
      const res = await answer;
      expect([res.statusCode, res.json(), events]).toEqual([
        413,
        { error: 'request body is larger than 16 bytes' },
        [first, second],
      ]);
    },
  );

  it('refuses a body that is not application/json with 400', async () => {
    const a = app();
    apps.push(a);
    const res = await a.inject({
      method: 'POST',
      url: '/validate',
      headers: { 'content-type': 'text/plain' },
      payload: '{}',
    });
    expect([res.statusCode, res.json()]).toEqual([400, { error: 'Content-Type must be application/json' }]);
  });
});

describe('answers outside a review', () => {
  it('a 404 names the method and the path without its query', async () => {
    const a = app();
    apps.push(a);
    const res = await a.inject({ method: 'GET', url: '/nowhere?secret=1' });
    expect([res.statusCode, res.headers['content-type'], res.json()]).toEqual([
      404,
      'application/json; charset=utf-8',
      { error: 'no route for GET /nowhere' },
    ]);
  });

  it('a review is answered as JSON, on a connection kept open outside shutdown', async () => {
    const a = app();
    apps.push(a);
    const review = readFileSync(
      join(import.meta.dirname, '..', 'fixtures', 'reviews', 'create-allowed.json'),
    );
    for (const url of ['/validate', '/mutate', '/nowhere']) {
      const res = await a.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        payload: review,
      });
      expect([url, res.headers['content-type'], res.headers['connection']]).toEqual([
        url,
        'application/json; charset=utf-8',
        'keep-alive',
      ]);
    }
  });

  it('during shutdown every answer asks the client to close the connection', async () => {
    let closing = false;
    const a = app({ closing: () => closing });
    apps.push(a);
    expect((await a.inject({ method: 'GET', url: '/x' })).headers['connection']).not.toBe('close');
    closing = true;
    expect((await a.inject({ method: 'GET', url: '/x' })).headers['connection']).toBe('close');
  });

  async function raw(request: string): Promise<string> {
    const a = app();
    apps.push(a);
    await a.listen({ port: 0, host: '127.0.0.1' });
    const port = (a.server.address() as { port: number }).port;
    const socket = connect({ host: '127.0.0.1', port });
    await once(socket, 'connect');
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString()));
    socket.on('error', () => {});
    socket.write(request);
    await once(socket, 'close');
    return text;
  }

  it("a request Node's parser refuses gets a JSON 400 and a closed connection", async () => {
    const text = await raw(
      'POST /validate HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}',
    );
    const body = JSON.stringify({ error: 'Bad Request' });
    expect(text).toBe(
      `HTTP/1.1 400 Bad Request\r\nContent-Length: ${body.length}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  });

  it('headers over the limit get a JSON 431', async () => {
    const text = await raw(`GET / HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const body = JSON.stringify({ error: 'Request Header Fields Too Large' });
    expect(text).toBe(
      `HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: ${body.length}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  });
});

/** What Node's parser hands the client error handler. */
type ClientError = Parameters<NonNullable<ReturnType<typeof transportOptions>['clientErrorHandler']>>[0];

describe("the answer to a request Node's parser refuses, on its own", () => {
  /** A client socket: what was written to it, whether and when it was destroyed. */
  function socket(state: { destroyed?: boolean; writable?: boolean } = {}) {
    const s = {
      destroyed: state.destroyed ?? false,
      writable: state.writable ?? true,
      written: [] as string[],
      destroyCalls: 0,
      end(text: string) {
        s.written.push(text);
      },
      destroy() {
        s.destroyCalls++;
      },
    };
    return s;
  }
  const handle = (code: string, s: ReturnType<typeof socket>) =>
    transportOptions(1, undefined).clientErrorHandler!(
      Object.assign(new Error('x'), { code }) as unknown as ClientError,
      s as unknown as Socket,
    );
  const answerOf = (status: string, message: string) => {
    const body = JSON.stringify({ error: message });
    return `HTTP/1.1 ${status} ${message}\r\nContent-Length: ${body.length}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`;
  };

  it.each([
    ['ERR_HTTP_REQUEST_TIMEOUT', '408', 'Request Timeout'],
    ['HPE_HEADER_OVERFLOW', '431', 'Request Header Fields Too Large'],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', '400', 'Bad Request'],
    ['HPE_INVALID_CHUNK_SIZE', '400', 'Bad Request'],
  ])(
    '%s: answers %s %s, ends the socket, and destroys it 1 s later without holding the process',
    (code, status, message) => {
      vi.useFakeTimers();
      try {
        const s = socket();
        handle(code, s);
        expect(s.written).toEqual([answerOf(status, message)]);
        expect(vi.getTimerCount()).toBe(1);
        vi.advanceTimersByTime(999);
        expect(s.destroyCalls).toBe(0);
        vi.advanceTimersByTime(1);
        expect(s.destroyCalls).toBe(1);
      } finally {
        vi.useRealTimers();
      }
    },
  );

  it('the destroy timer does not keep the process alive', () => {
    const unref = vi.fn();
    const spy = vi.spyOn(globalThis, 'setTimeout').mockReturnValue({ unref } as unknown as NodeJS.Timeout);
    try {
      handle('HPE_INVALID_METHOD', socket());
      expect(spy).toHaveBeenCalledTimes(1);
      expect(unref).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('writes nothing to a socket no longer writable, but still destroys it', () => {
    vi.useFakeTimers();
    try {
      const s = socket({ writable: false });
      handle('HPE_INVALID_METHOD', s);
      expect(s.written).toEqual([]);
      vi.advanceTimersByTime(1_000);
      expect(s.destroyCalls).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('leaves a reset or destroyed socket alone', () => {
    vi.useFakeTimers();
    try {
      for (const [code, s] of [
        ['ECONNRESET', socket()],
        ['HPE_INVALID_METHOD', socket({ destroyed: true })],
      ] as const) {
        handle(code, s);
        expect(s.written).toEqual([]);
        expect(vi.getTimerCount()).toBe(0);
      }
    } finally {
      vi.useRealTimers();
    }
  });
});
