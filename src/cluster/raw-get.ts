/**
 * A GET that returns the API server's JSON as it was sent. client-node's typed
 * clients rebuild objects into their models, which renames schema members
 * (`x-kubernetes-validations` becomes `xKubernetesValidations`) and drops
 * unknown ones; reading a CRD's schema needs the wire form. Authentication,
 * TLS and proxies come from the kubeconfig exactly as for the typed clients.
 */
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { readBoundedBody } from './bounded-body.js';

/** Thrown for a non-2xx answer; `statusCode` and `body` are what errors.ts reads. */
export class KubeHttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string,
    path: string,
    method = 'GET',
  ) {
    super(`${method} ${path}: HTTP ${statusCode}`);
  }
}

/** Largest body read (a Gateway CRD is ~200 kB; a list of one, the same). */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export function getJson(
  kc: KubeConfig,
  path: string,
  query: Readonly<Record<string, string>>,
  timeoutMs: number,
): Promise<unknown> {
  return requestJson(kc, 'GET', path, { query, timeoutMs });
}

/** Any verb, with an optional JSON body; the answer's JSON as sent, or a KubeHttpError. */
export async function requestJson(
  kc: KubeConfig,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  opts: {
    readonly query?: Readonly<Record<string, string>>;
    readonly body?: unknown;
    readonly timeoutMs: number;
    /** Largest answer read (default 8 MiB); a list of large objects asks for more. */
    readonly maxBodyBytes?: number;
  },
): Promise<unknown> {
  const { query = {}, timeoutMs } = opts;
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(cluster.server.replace(/\/+$/, '') + path);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  const options: RequestOptions & { headers?: Record<string, string> } = {};
  await kc.applyToHTTPSOptions(options);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<unknown>((resolve, reject) => {
    const req = send(
      url,
      {
        ...options,
        method,
        headers: {
          ...options.headers,
          accept: 'application/json',
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
        },
        timeout: timeoutMs,
      },
      (res) => {
        readBoundedBody(req, res, opts.maxBodyBytes ?? MAX_BODY_BYTES, `${method} ${path}: answer`).then(
          (text) => {
            const code = res.statusCode ?? 0;
            if (code < 200 || code >= 300) {
              reject(new KubeHttpError(code, text, path, method));
              return;
            }
            try {
              resolve(JSON.parse(text) as unknown);
            } catch {
              reject(new Error(`${method} ${path}: the answer is not JSON`));
            }
          },
          reject,
        );
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs / 1000} s`)),
    );
    req.on('error', reject);
    req.end(payload);
  });
}
