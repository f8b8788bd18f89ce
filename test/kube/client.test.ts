/**
 * The Kubernetes client (src/kube/client.ts) against a scripted HTTP server
 * on loopback: what a request sends (method, path, query, headers, body), a
 * 2xx answer's JSON, a non-2xx answer as one KubeApiError, the 8 MiB answer
 * cap and a request's own, the deadline and its words, the retry policy, and a
 * stream (a watch) whose start deadline ends once its headers are in: the
 * stream itself lasts as long as the server sends.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { KubeConfig } from '../../src/kube/kubeconfig-model.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { kubeClient, type KubeClient } from '../../src/kube/client.js';
import { BadAnswerError, KubeApiError } from '../../src/kube/errors.js';
import { sleep } from '../kit/eventually.js';

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let handler: Handler;
const seen: Seen[] = [];
let client: KubeClient;
const MiB = 1024 * 1024;

function configFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'the-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      handler(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  client = kubeClient(configFor(`http://127.0.0.1:${port}`));
});
afterEach(() => {
  seen.length = 0;
});
afterAll(async () => {
  client.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const answer =
  (status: number, text: string, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(text);
  };

/** A JSON string answer of exactly `bytes` bytes. */
const ofSize = (bytes: number) => JSON.stringify('x'.repeat(bytes - 2));

describe('json()', () => {
  it('sends the method, path, query, credentials and a JSON body with its type and length; returns the JSON', async () => {
    handler = answer(200, '{"kind":"Lease"}');
    const got = await client.json({
      method: 'PATCH',
      path: '/api/v1/namespaces/a/configmaps/b',
      query: { fieldManager: 'me', dryRun: 'All' },
      body: { data: { k: 'é' } },
      contentType: 'application/merge-patch+json',
      timeoutMs: 5_000,
    });
    expect(got).toEqual({ kind: 'Lease' });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      method: 'PATCH',
      url: '/api/v1/namespaces/a/configmaps/b?fieldManager=me&dryRun=All',
      body: '{"data":{"k":"é"}}',
    });
    expect(seen[0]!.headers).toMatchObject({
      accept: 'application/json',
      authorization: 'Bearer the-token',
      'content-type': 'application/merge-patch+json',
      'content-length': String(Buffer.byteLength('{"data":{"k":"é"}}')),
    });
  });

  it('a GET by default, without a body or a content type; a body is application/json unless told', async () => {
    handler = answer(200, '[]');
    await client.json({ path: '/api', timeoutMs: 5_000 });
    await client.json({ method: 'POST', path: '/api', body: {}, timeoutMs: 5_000 });
    expect(seen.map((s) => [s.method, s.headers['content-type'], s.body])).toEqual([
      ['GET', undefined, ''],
      ['POST', 'application/json', '{}'],
    ]);
  });

  it('a non-2xx answer is a KubeApiError with the status, the body as sent and Retry-After', async () => {
    handler = answer(429, '{"kind":"Status"}', { 'retry-after': '3' });
    const err = await client.json({ path: '/x', timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({
      message: 'GET /x: HTTP 429',
      statusCode: 429,
      body: '{"kind":"Status"}',
      retryAfterMs: 3_000,
    });
    handler = answer(300, 'x');
    const below = await client
      .json({ path: '/y', what: 'the thing', timeoutMs: 5_000 })
      .catch((e: unknown) => e);
    expect(below).toMatchObject({ message: 'the thing: HTTP 300' });
  });

  it.each([200, 204, 299])('a %i answer is a success', async (status) => {
    handler = answer(status, status === 204 ? '' : '{}');
    const parse = (text: string) => text;
    await expect(client.json({ path: '/ok', timeoutMs: 5_000, parse })).resolves.toBe(
      status === 204 ? '' : '{}',
    );
  });

  it('an answer that is not JSON is a BadAnswerError naming the request; a parse of its own decides', async () => {
    handler = answer(200, '<html>');
    const err = await client
      .json({ method: 'DELETE', path: '/z', timeoutMs: 5_000 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadAnswerError);
    expect(err).toMatchObject({ reason: 'not-json', message: 'DELETE /z: the answer is not JSON' });
    const failing = () => {
      throw new Error('no');
    };
    await expect(client.json({ path: '/z', timeoutMs: 5_000, parse: failing })).rejects.toMatchObject({
      reason: 'not-json',
    });
  });

  it('reads an answer of 8 MiB; one byte more is too large', async () => {
    handler = answer(200, ofSize(8 * MiB));
    const whole = await client.json({ path: '/big', timeoutMs: 20_000 });
    expect(typeof whole === 'string' && whole.length).toBe(8 * MiB - 2);
    handler = answer(200, ofSize(8 * MiB + 1));
    const err = await client.json({ path: '/big', timeoutMs: 20_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadAnswerError);
    expect(err).toMatchObject({
      reason: 'too-large',
      message: `GET /big: answer larger than ${8 * MiB} bytes`,
    });
  });

  it("a request's own cap replaces the 8 MiB", async () => {
    handler = answer(200, ofSize(100));
    await expect(client.json({ path: '/c', timeoutMs: 5_000, maxBodyBytes: 100 })).resolves.toHaveLength(98);
    await expect(client.json({ path: '/c', timeoutMs: 5_000, maxBodyBytes: 99 })).rejects.toMatchObject({
      reason: 'too-large',
      message: 'GET /c: answer larger than 99 bytes',
    });
    handler = answer(200, ofSize(9 * MiB));
    await expect(
      client.json({ path: '/c', timeoutMs: 20_000, maxBodyBytes: 10 * MiB }),
    ).resolves.toHaveLength(9 * MiB - 2);
  });

  it('an answer over its cap that came whole with its headers is refused, and nothing is thrown elsewhere', async () => {
    // The socket is back in the keep-alive pool before the reader sees the answer is too large.
    const uncaught: unknown[] = [];
    const record = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', record);
    try {
      handler = answer(200, ofSize(100));
      await expect(client.json({ path: '/whole', timeoutMs: 5_000, maxBodyBytes: 99 })).rejects.toMatchObject(
        {
          reason: 'too-large',
        },
      );
      await sleep(100);
      expect(uncaught).toEqual([]);
      // The next request goes through.
      handler = answer(200, '{}');
      await expect(client.json({ path: '/next', timeoutMs: 5_000 })).resolves.toEqual({});
    } finally {
      process.off('uncaughtException', record);
    }
  });

  it('gives up at its deadline, saying so in seconds; an answer within it is read', async () => {
    handler = () => undefined;
    const started = performance.now();
    const err = await client.json({ path: '/slow', timeoutMs: 300 }).catch((e: unknown) => e);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(err).toMatchObject({ message: 'GET /slow: no answer within 0.3 s' });
  });

  it("the caller's signal cuts the request off with its reason", async () => {
    handler = () => undefined;
    const controller = new AbortController();
    const asked = client.json({ path: '/cut', timeoutMs: 5_000, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('shutting down')), 50);
    await expect(asked).rejects.toThrow('shutting down');
    const aborted = AbortSignal.abort(new Error('already'));
    await expect(client.json({ path: '/cut', timeoutMs: 5_000, signal: aborted })).rejects.toThrow('already');
  });

  it('sends again as the retry policy says, with the attempt counted; its undefined gives up', async () => {
    let calls = 0;
    handler = (req, res) => answer(++calls < 3 ? 500 : 200, '{"n":1}')(req, res);
    const attempts: number[] = [];
    const retrying = kubeClient(client.config, {
      retry: (err, attempt) => {
        attempts.push(attempt);
        return err instanceof KubeApiError && attempt < 5 ? 10 : undefined;
      },
    });
    try {
      await expect(retrying.json({ path: '/r', timeoutMs: 5_000 })).resolves.toEqual({ n: 1 });
      expect(attempts).toEqual([1, 2]);
      expect(seen).toHaveLength(3);
      // An aborted request is not sent again.
      handler = answer(500, '');
      attempts.length = 0;
      await expect(
        retrying.json({ path: '/r', timeoutMs: 5_000, signal: AbortSignal.abort(new Error('stop')) }),
      ).rejects.toThrow('stop');
      expect(attempts).toEqual([]);
    } finally {
      retrying.close();
    }
  });
});

describe('send()', () => {
  it('returns any status with its text and Retry-After', async () => {
    handler = answer(503, 'down', { 'retry-after': '7' });
    await expect(client.send({ path: '/s', timeoutMs: 5_000 })).resolves.toEqual({
      status: 503,
      text: 'down',
      retryAfter: '7',
      warnings: [],
    });
  });
});

describe('stream()', () => {
  it('the start deadline ends with the headers: a stream three times longer is read whole', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a":1}\n');
      setTimeout(() => res.write('{"b":2}\n'), 300);
      setTimeout(() => res.end('{"c":3}\n'), 600);
    };
    const body = await client.stream({
      path: '/watch',
      query: { watch: 'true' },
      startTimeoutMs: 200,
      signal: new AbortController().signal,
      what: 'watch /watch',
    });
    const chunks: Buffer[] = [];
    const text = await new Promise<string>((resolve, reject) => {
      body.on('data', (c: Buffer) => chunks.push(c));
      body.on('error', reject);
      body.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    expect(text).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');
    expect(seen[0]!.url).toBe('/watch?watch=true');
  });

  it('without headers within the start deadline: rejects, saying so', async () => {
    handler = () => undefined;
    await expect(
      client.stream({
        path: '/w',
        startTimeoutMs: 200,
        signal: new AbortController().signal,
        what: 'watch /w',
      }),
    ).rejects.toThrow('watch /w: no answer within 0.2 s');
  });

  it('a non-2xx answer is a KubeApiError with the body and Retry-After', async () => {
    handler = answer(410, '{"reason":"Expired"}', { 'retry-after': '2' });
    const err = await client
      .stream({ path: '/w', startTimeoutMs: 2_000, signal: new AbortController().signal, what: 'watch /w' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({
      message: 'watch /w: HTTP 410',
      statusCode: 410,
      body: '{"reason":"Expired"}',
      retryAfterMs: 2_000,
    });
  });

  it("the caller's signal ends the stream after its start", async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      res.write('{}\n');
    };
    const controller = new AbortController();
    const body = await client.stream({
      path: '/w',
      startTimeoutMs: 2_000,
      signal: controller.signal,
      what: 'w',
    });
    const ended = new Promise<unknown>((resolve) => {
      body.on('error', resolve);
      body.on('close', () => resolve('closed'));
      body.resume();
    });
    controller.abort(new Error('stopped'));
    expect(await ended).toBeDefined();
    expect(body.destroyed).toBe(true);
  });
});
