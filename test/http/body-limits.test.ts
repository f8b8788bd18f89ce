/**
 * The request-body limit as a client sees it, over real HTTPS, with a
 * non-default --max-body-bytes: the limit is the flag's, an over-limit body is
 * read (and discarded) before the 413 so a client still sending reads the
 * answer instead of a reset, and that reading is capped at 64 MiB and 5 s so a
 * client cannot hold the connection by sending forever.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsPost } from '../kit/http.js';
import { startServeWithCerts, type RunningServer, type ServingWithCerts } from '../kit/server-process.js';
import { type CertFiles } from '../kit/key-files.js';
import { upload } from '../kit/upload.js';

const LIMIT = 64 * 1024;
const MiB = 1024 * 1024;
/** The server's caps on discarding an over-limit body (src/http/app.ts). */
const DRAIN_CAP_BYTES = 64 * MiB;
const DRAIN_CAP_MS = 5_000;
/** Node's request timeout, what an unbounded drain would fall back to. */
const REQUEST_TIMEOUT_MS = 30_000;

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reviews', `${name}.json`), 'utf8'));

/** A valid review padded by an annotation to exactly `size` bytes. */
function reviewOfSize(size: number): string {
  const review = fixture('create-allowed');
  review.request.uid = 'sized';
  review.request.object.metadata.annotations = { pad: '' };
  const pad = size - Buffer.byteLength(JSON.stringify(review));
  review.request.object.metadata.annotations.pad = 'p'.repeat(pad);
  const text = JSON.stringify(review);
  if (Buffer.byteLength(text) !== size) throw new Error('padding is off');
  return text;
}

let served: ServingWithCerts;
let certs: CertFiles;
let server: RunningServer;
beforeAll(async () => {
  served = await startServeWithCerts(['--service-cidr', '10.96.0.0/12', '--max-body-bytes', String(LIMIT)]);
  ({ certs, server } = served);
});
afterAll(async () => served?.stop());

const post = (body: string) =>
  httpsPost(server.port, '/validate?timeout=10s', body, { ca: certs.generated.caCert });

describe('--max-body-bytes (a non-default value)', () => {
  it('answers a review of exactly the limit, and 413 one byte past it', async () => {
    const atLimit = await post(reviewOfSize(LIMIT));
    expect(atLimit.status).toBe(200);
    expect(JSON.parse(atLimit.body).response).toMatchObject({ uid: 'sized', allowed: true });

    const over = await post(reviewOfSize(LIMIT + 1));
    expect(over.status).toBe(413);
    expect(JSON.parse(over.body)).toEqual({ error: `request body is larger than ${LIMIT} bytes` });
  });
});

describe('an over-limit body', () => {
  it('a client still sending reads the whole 413, then a clean close, never a reset', async () => {
    // 4 MiB against a 64 KiB limit: the answer is decided after the first
    // chunk, long before the client is done sending.
    const result = await upload({
      port: server.port,
      ca: certs.generated.caCert,
      declaredBytes: 4 * MiB,
      timeoutMs: 20_000,
    });
    expect(result.errorCode).toBeUndefined();
    expect(result.ended).toBe('closed');
    expect(result.sentAll).toBe(true);
    expect(result.status).toBe(413);
    expect(result.text).toMatch(/\r\nconnection: close\r\n/i);
    expect(result.text).toContain(`{"error":"request body is larger than ${LIMIT} bytes"}`);
    // Serving goes on.
    expect((await post(reviewOfSize(4000))).status).toBe(200);
  });

  it(`is discarded for at most ${DRAIN_CAP_BYTES / MiB} MiB: a client sending on and on is cut off`, async () => {
    const declared = 160 * MiB;
    const result = await upload({
      port: server.port,
      ca: certs.generated.caCert,
      declaredBytes: declared,
      chunkBytes: MiB,
      timeoutMs: 25_000,
    });
    expect(result.ended).not.toBe('timeout');
    expect(result.sentAll).toBe(false);
    // What the client got written before the server closed: the cap plus
    // socket buffers (a few MiB), never the whole body.
    expect(result.bodyBytesWritten).toBeGreaterThan(LIMIT);
    expect(result.bodyBytesWritten).toBeLessThan(DRAIN_CAP_BYTES + 32 * MiB);
    expect((await post(reviewOfSize(4000))).status).toBe(200);
  });

  it(`is waited for at most ${DRAIN_CAP_MS / 1000} s: a client that stops sending gets the 413 and a close`, async () => {
    // The body stops half-way and the connection stays open. Bound: the 5 s cap
    // with generous room for a loaded machine, well below the 30 s request
    // timeout an unbounded wait would end at (with a 408, not a 413).
    const bound = (DRAIN_CAP_MS + REQUEST_TIMEOUT_MS) / 2;
    const result = await upload({
      port: server.port,
      ca: certs.generated.caCert,
      declaredBytes: 10 * MiB,
      sendBytes: 2 * LIMIT,
      timeoutMs: bound,
    });
    expect(result.ended).not.toBe('timeout');
    expect(result.status).toBe(413);
    expect(result.text).toMatch(/\r\nconnection: close\r\n/i);
  }, 40_000);
});
