/**
 * The app's transport (src/http/app.ts) in process: the listener's timeouts,
 * how long a body waits for room in the budget (half the apiserver's
 * `?timeout=`, at most 5 s), the refusal of other content types, the 404
 * text, `Connection: close` during shutdown, and the 400/431 a client gets
 * when Node's parser refuses its request. https-server.test.ts and the
 * reliability suites see these through the built server.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { staticSources } from '../../src/cluster/static-source.js';
import { buildApp, httpsServerOptions, transportOptions } from '../../src/http/app.js';
import type { BodyBudget } from '../../src/http/body-budget.js';
import { createServerMetrics } from '../../src/http/metrics.js';
import { TLS_POLICY } from '../../src/http/tls.js';
import { ruleInputs } from '../../src/inputs/rule-inputs.js';
import { FIXTURE_SETTINGS } from '../support/app.js';
import { DUAL_STACK } from '../support/gateways.js';

function app(over: { bodyBudget?: BodyBudget; closing?: () => boolean } = {}) {
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
