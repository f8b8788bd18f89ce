/** Plain HTTP(S) calls to a server under test: a POST over TLS, a GET, a status probe. */
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { get, request as httpRequest, type IncomingMessage } from 'node:http';
import { sleep } from './eventually.js';

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Reads a whole response into an HttpResult. */
export function collect(res: IncomingMessage, resolve: (result: HttpResult) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () =>
    resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
  );
}

export function httpsPost(
  port: number,
  path: string,
  body: string | Buffer,
  options: RequestOptions & { contentType?: string } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        rejectUnauthorized: options.ca !== undefined,
        servername: 'localhost',
        ...options,
        headers: {
          'content-type': options.contentType ?? 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => collect(res, resolve),
    );
    req.on('error', reject);
    req.end(body);
  });
}

export function httpGet(port: number, path: string): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path }, (res) => collect(res, resolve))
      .on('error', reject)
      .end();
  });
}

/** GET http://127.0.0.1:port/path → status code (0 when the connection fails). */
export function httpStatus(port: number, path: string, timeoutMs = 1_000): Promise<number> {
  return new Promise((done) => {
    const req = get({ host: '127.0.0.1', port, path, timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(0));
  });
}

/** Polls /readyz until 200; returns ms since `since` (performance.now()). */
export async function waitReady(healthPort: number, since: number, timeoutMs = 10_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if ((await httpStatus(healthPort, '/readyz', 500)) === 200) return performance.now() - since;
    await sleep(2);
  }
  throw new Error(`/readyz not 200 within ${timeoutMs} ms`);
}
