/**
 * The bad-request catalogue (docs/dev/reliability.md lists the same rows): every
 * odd body or request over real HTTPS gets its documented answer — a 200 review
 * with the request's uid, 400, 404 or 413 — and a good review right after it is
 * still answered correctly.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, rawExchange, rawPost, reviewProblem } from '../kit/webhook-client.js';
import { createSmallReview, statusUpdateReview, type Json, type JsonObject } from '../kit/payloads.js';
import { upload } from '../kit/upload.js';
import { goodReviewProblem, serve, type Served } from './helpers.js';
import { sleep } from '../kit/eventually.js';

const MiB = 1024 * 1024;
const LIMIT = 7 * MiB;

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly ended?: string;
  readonly elapsedMs?: number;
  readonly headers?: Record<string, string | string[] | undefined>;
}

type Expect = 200 | 'allowed' | 'denied' | 'patched' | 400 | 404 | 413;

interface Case {
  readonly name: string;
  /** What docs/dev/reliability.md promises. */
  readonly expect: Expect;
  /** For 200: the uid the answer must carry (default: the review's own). */
  readonly uid?: string;
  readonly apiVersion?: string;
  readonly send: (s: Served) => Promise<Answer>;
}

const review = (mutate?: (r: JsonObject & { request: JsonObject }) => void, uid = 'cat-uid') => {
  const r = createSmallReview(uid) as JsonObject & { request: JsonObject };
  mutate?.(r);
  return r;
};
const object = (r: { request: JsonObject }) => r.request['object'] as JsonObject;
const spec = (r: { request: JsonObject }) => object(r)['spec'] as JsonObject;
const addresses = (r: { request: JsonObject }) => spec(r)['addresses'] as JsonObject[];

const send =
  (body: string | Buffer | Json, opts: { path?: string; headers?: Record<string, string> } = {}) =>
  async (s: Served): Promise<Answer> => {
    const bytes = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const reply = await post({
      agent: s.agent,
      port: s.server.port,
      path: opts.path ?? '/validate?timeout=10s',
      body: bytes,
      headers: opts.headers ?? {},
      timeoutMs: 20_000,
    });
    return { status: reply.status, body: reply.body, headers: reply.headers };
  };

const raw =
  (request: Buffer | string, pieces: (Buffer | string | { pauseMs: number })[] = [], timeoutMs = 15_000) =>
  async (s: Served): Promise<Answer> => {
    const reply = await rawExchange(s.server.port, s.ca, [request, ...pieces], timeoutMs);
    const split = reply.text.indexOf('\r\n\r\n');
    return {
      status: reply.status,
      body: split >= 0 ? reply.text.slice(split + 4) : '',
      ended: reply.ended,
      elapsedMs: reply.elapsedMs,
    };
  };

/** Nested arrays `depth` deep, as text (JSON.stringify would recurse). */
const deepArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const withDeepLabel = (depth: number) =>
  JSON.stringify(review()).replace('"labels":{', `"labels":{"deep":${deepArrays(depth)},`);

/** A valid review padded by an annotation to exactly `size` bytes. */
function reviewOfSize(size: number, uid: string): Buffer {
  const base = JSON.stringify(review(undefined, uid));
  const marker = '"annotations":{';
  const pad = size - Buffer.byteLength(base) - '"pad":"",'.length;
  const text = base.replace(marker, `${marker}"pad":"${'p'.repeat(pad)}",`);
  const bytes = Buffer.from(text);
  if (bytes.length !== size) throw new Error(`padding is off: ${bytes.length} != ${size}`);
  return bytes;
}

const MB = 'm'.repeat(MiB);

/** The text with its `@@` replaced by raw bytes. */
function withBytes(text: string, bytes: number[]): Buffer {
  const [before, after] = text.split('@@') as [string, string];
  return Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);
}

const CASES: Case[] = [
  // --- transport and body
  { name: 'empty body', expect: 400, send: send('') },
  { name: 'whitespace-only body', expect: 400, send: send(' \n\t ') },
  {
    name: 'no Content-Type header',
    expect: 400,
    send: raw(
      rawPost(JSON.stringify(review()), { headers: { 'content-type': '' } })
        .toString('latin1')
        .replace('content-type: \r\n', ''),
    ),
  },
  {
    name: 'Content-Type text/plain',
    expect: 400,
    send: send(review(), { headers: { 'content-type': 'text/plain' } }),
  },
  {
    name: 'Content-Type application/x-www-form-urlencoded',
    expect: 400,
    send: send(review(), { headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
  },
  {
    name: 'Content-Type application/json; charset=utf-8',
    expect: 'allowed',
    send: send(review(), { headers: { 'content-type': 'application/json; charset=utf-8' } }),
  },
  {
    name: 'Content-Type APPLICATION/JSON (case)',
    expect: 'allowed',
    send: send(review(), { headers: { 'content-type': 'APPLICATION/JSON' } }),
  },
  { name: 'truncated JSON', expect: 400, send: send(JSON.stringify(review()).slice(0, 1000)) },
  {
    name: 'invalid JSON (trailing comma)',
    expect: 400,
    send: send(JSON.stringify(review()).replace(/}$/, ',}')),
  },
  { name: 'invalid JSON (single quotes)', expect: 400, send: send("{'kind':'AdmissionReview'}") },
  {
    name: 'UTF-8 byte order mark before the JSON',
    expect: 400,
    send: send(`\ufeff${JSON.stringify(review())}`),
  },
  {
    name: 'YAML instead of JSON',
    expect: 400,
    send: send('kind: AdmissionReview\napiVersion: admission.k8s.io/v1\n'),
  },
  {
    name: 'gzip-compressed body (Content-Encoding: gzip)',
    expect: 400,
    send: send(gzipSync(JSON.stringify(review())), { headers: { 'content-encoding': 'gzip' } }),
  },
  {
    name: 'invalid UTF-8 inside a string value',
    expect: 'allowed',
    send: send(
      withBytes(JSON.stringify(review()).replace('"name":"shop"', '"name":"sh@@op"'), [0xc3, 0x28, 0xff]),
    ),
  },
  {
    name: 'invalid UTF-8 bytes in the uid (read as U+FFFD)',
    expect: 'allowed',
    uid: 'bad-\ufffd\ufffd-uid',
    send: send(withBytes(JSON.stringify(review(undefined, 'bad-@@-uid')), [0xff, 0xc3])),
  },
  {
    name: 'NUL and lone surrogate escapes in values',
    expect: 200,
    send: send(review((r) => (addresses(r)[0]!['value'] = '\u0000\ud800'))),
  },
  // --- the whole body of a wrong type
  { name: 'JSON null', expect: 400, send: send('null') },
  { name: 'JSON number', expect: 400, send: send('42') },
  { name: 'JSON string', expect: 400, send: send('"AdmissionReview"') },
  { name: 'JSON true', expect: 400, send: send('true') },
  { name: 'JSON array holding a review', expect: 400, send: send([review()]) },
  { name: 'empty object', expect: 400, send: send({}) },
  // --- the envelope
  { name: 'apiVersion missing', expect: 400, send: send(review((r) => delete r['apiVersion'])) },
  { name: 'apiVersion a number', expect: 400, send: send(review((r) => (r['apiVersion'] = 1))) },
  {
    name: 'apiVersion unknown (admission.k8s.io/v2)',
    expect: 400,
    send: send(review((r) => (r['apiVersion'] = 'admission.k8s.io/v2'))),
  },
  {
    name: 'apiVersion admission.k8s.io/v1beta1',
    expect: 'allowed',
    apiVersion: 'admission.k8s.io/v1beta1',
    send: send(review((r) => (r['apiVersion'] = 'admission.k8s.io/v1beta1'))),
  },
  { name: 'kind not AdmissionReview', expect: 400, send: send(review((r) => (r['kind'] = 'Review'))) },
  { name: 'request missing', expect: 400, send: send(review((r) => delete (r as JsonObject)['request'])) },
  { name: 'request null', expect: 400, send: send({ ...review(), request: null }) },
  { name: 'request an array', expect: 400, send: send({ ...review(), request: [review().request] }) },
  { name: 'request a string', expect: 400, send: send({ ...review(), request: 'x' }) },
  { name: 'uid missing', expect: 400, send: send(review((r) => delete r.request['uid'])) },
  { name: 'uid a number', expect: 400, send: send(review((r) => (r.request['uid'] = 5))) },
  { name: 'uid null', expect: 400, send: send(review((r) => (r.request['uid'] = null))) },
  { name: 'uid an object', expect: 400, send: send(review((r) => (r.request['uid'] = { uid: 'x' }))) },
  { name: 'uid empty', expect: 400, send: send(review((r) => (r.request['uid'] = ''))) },
  {
    name: 'uid of 129 characters',
    expect: 400,
    send: send(review((r) => (r.request['uid'] = 'u'.repeat(129)))),
  },
  { name: 'uid of 1 MiB', expect: 400, send: send(review((r) => (r.request['uid'] = MB))) },
  {
    name: 'uid duplicated (last one wins, as in Go)',
    expect: 'allowed',
    uid: 'second',
    send: send(JSON.stringify(review(undefined, 'second')).replace('"uid":', '"uid":"first","uid":')),
  },
  { name: 'request.kind a string', expect: 400, send: send(review((r) => (r.request['kind'] = 'Gateway'))) },
  {
    name: 'request.kind.kind a number',
    expect: 400,
    send: send(review((r) => ((r.request['kind'] as JsonObject)['kind'] = 1))),
  },
  { name: 'request.resource an array', expect: 400, send: send(review((r) => (r.request['resource'] = []))) },
  {
    name: 'operation PATCH (not an admission operation)',
    expect: 400,
    send: send(review((r) => (r.request['operation'] = 'PATCH'))),
  },
  { name: 'operation a number', expect: 400, send: send(review((r) => (r.request['operation'] = 1))) },
  { name: 'dryRun a string', expect: 400, send: send(review((r) => (r.request['dryRun'] = 'true'))) },
  { name: 'name a number', expect: 400, send: send(review((r) => (r.request['name'] = 7))) },
  // --- the object: decodable reviews always get a 200 review
  { name: 'object null on CREATE', expect: 200, send: send(review((r) => (r.request['object'] = null))) },
  { name: 'object a string', expect: 200, send: send(review((r) => (r.request['object'] = 'Gateway'))) },
  { name: 'object an array', expect: 200, send: send(review((r) => (r.request['object'] = [1, 2]))) },
  { name: 'spec an array', expect: 200, send: send(review((r) => (object(r)['spec'] = []))) },
  {
    name: 'spec.addresses a string',
    expect: 200,
    send: send(review((r) => (spec(r)['addresses'] = '10.96.0.1'))),
  },
  {
    name: 'spec.addresses[0] a number',
    expect: 200,
    send: send(review((r) => ((spec(r)['addresses'] as Json[])[0] = 1))),
  },
  {
    name: 'address value a number',
    expect: 200,
    send: send(review((r) => (addresses(r)[0]!['value'] = 10))),
  },
  {
    name: 'routability a number',
    expect: 'denied',
    send: send(review((r) => (addresses(r)[0]!['routability'] = 1))),
  },
  {
    name: 'routability of 1 MiB',
    expect: 'denied',
    send: send(review((r) => (addresses(r)[0]!['routability'] = MB))),
  },
  {
    name: 'address value of 1 MiB',
    expect: 200,
    send: send(review((r) => (addresses(r)[0]!['value'] = MB))),
  },
  {
    name: 'annotation of 1 MiB',
    expect: 'allowed',
    send: send(
      review((r) => ((object(r)['metadata'] as { annotations: JsonObject }).annotations['big'] = MB)),
    ),
  },
  {
    name: '10,000 addresses',
    expect: 200,
    send: send(
      review(
        (r) =>
          (spec(r)['addresses'] = Array.from({ length: 10_000 }, (_, i) => ({
            type: 'IPAddress',
            value: `10.96.${i >> 8}.${i & 255}`,
            routability: 'Cluster',
          }))),
      ),
    ),
  },
  {
    name: '10,000 listeners',
    expect: 'allowed',
    send: send(
      review(
        (r) =>
          (spec(r)['listeners'] = Array.from({ length: 10_000 }, (_, i) => ({
            name: `l${i}`,
            port: 80,
            protocol: 'HTTP',
          }))),
      ),
    ),
  },
  // A label sits 5 levels in: 9,995 more make the 10,000 the apiserver's decoder allows.
  { name: 'nesting to 10,000 levels inside the object', expect: 'allowed', send: send(withDeepLabel(9_995)) },
  { name: '10,000-deep nesting as the whole body', expect: 400, send: send(deepArrays(10_000)) },
  { name: 'nesting to 10,001 levels inside the object', expect: 400, send: send(withDeepLabel(9_996)) },
  { name: '100,000-deep nesting inside the object', expect: 400, send: send(withDeepLabel(100_000)) },
  {
    name: '__proto__ key at the top level',
    expect: 'allowed',
    send: send(JSON.stringify(review()).replace('{', '{"__proto__":{"allowed":false,"polluted":true},')),
  },
  {
    name: 'uid only under request.__proto__ (not an own property)',
    expect: 400,
    send: send(
      JSON.stringify(review((r) => delete r.request['uid'])).replace(
        '"request":{',
        '"request":{"__proto__":{"uid":"proto-uid"},',
      ),
    ),
  },
  {
    name: 'addresses only under spec.__proto__',
    expect: 'allowed',
    send: send(
      JSON.stringify(review((r) => delete spec(r)['addresses'])).replace(
        '"spec":{',
        '"spec":{"__proto__":{"addresses":[{"type":"IPAddress","value":"8.8.8.8","routability":"Cluster"}]},',
      ),
    ),
  },
  {
    name: 'constructor / prototype keys',
    expect: 'allowed',
    send: send(
      JSON.stringify(review()).replace(
        '"request":{',
        '"request":{"constructor":{"prototype":{"allowed":false}},"prototype":1,',
      ),
    ),
  },
  {
    name: 'mutating webhook, status UPDATE',
    expect: 'patched',
    uid: 'status-uid',
    send: send(statusUpdateReview('status-uid'), { path: '/mutate?timeout=10s' }),
  },
  {
    name: 'query timeout not in seconds',
    expect: 'allowed',
    send: send(review(), { path: '/validate?timeout=abc' }),
  },
  // --- the size limit (7 MiB)
  {
    name: 'body exactly 7 MiB',
    expect: 'allowed',
    uid: 'size-ok',
    send: send(reviewOfSize(LIMIT, 'size-ok')),
  },
  { name: 'body 7 MiB + 1 byte', expect: 413, send: send(reviewOfSize(LIMIT + 1, 'size-over')) },
  {
    name: 'declared Content-Length of 8 MiB, whole body sent',
    expect: 413,
    send: raw(rawPost(Buffer.alloc(8 * MiB, 0x20))),
  },
  {
    name: 'chunked body over the limit',
    expect: 413,
    send: raw(
      Buffer.concat([
        rawPost('', { contentLength: null, headers: { 'transfer-encoding': 'chunked' } }),
        ...Array.from({ length: 8 }, () => Buffer.from(`100000\r\n${' '.repeat(MiB)}\r\n`)),
        Buffer.from('0\r\n\r\n'),
      ]),
    ),
  },
  // --- HTTP oddities
  {
    name: 'Expect: 100-continue',
    expect: 'allowed',
    send: raw(rawPost(JSON.stringify(review()), { headers: { expect: '100-continue' } })),
  },
  {
    name: 'HTTP/1.0 request',
    expect: 'allowed',
    send: raw(rawPost(JSON.stringify(review())).toString('latin1').replace('HTTP/1.1', 'HTTP/1.0')),
  },
  { name: 'GET /validate', expect: 404, send: raw('GET /validate HTTP/1.1\r\nhost: localhost\r\n\r\n') },
  { name: 'POST to an unknown path', expect: 404, send: send(review(), { path: '/admit' }) },
  {
    name: 'two different Content-Length headers',
    expect: 400,
    send: raw(
      rawPost(JSON.stringify(review()))
        .toString('latin1')
        .replace('content-length:', 'content-length: 3\r\ncontent-length:'),
    ),
  },
  {
    name: 'malformed chunked encoding',
    expect: 400,
    send: raw(
      Buffer.concat([
        rawPost('', { contentLength: null, headers: { 'transfer-encoding': 'chunked' } }),
        Buffer.from('zz\r\nhello\r\n0\r\n\r\n'),
      ]),
    ),
  },
];

function problem(c: Case, a: Answer, sentUid: string): string | undefined {
  const wantStatus = typeof c.expect === 'number' ? c.expect : 200;
  if (a.status !== wantStatus) return `HTTP ${a.status} (want ${wantStatus}): ${a.body.slice(0, 200)}`;
  if (wantStatus === 200) {
    const body = a.body;
    const p = reviewProblem(body, c.uid ?? sentUid, c.apiVersion);
    if (p) return p;
    const response = (JSON.parse(body) as { response: { allowed: boolean; patch?: string } }).response;
    if (c.expect === 'allowed' && (!response.allowed || response.patch)) return 'want allowed';
    if (c.expect === 'denied' && response.allowed) return 'want denied';
    if (c.expect === 'patched' && !response.patch) return 'want a patch';
  } else if (wantStatus === 400 || wantStatus === 413) {
    // Short JSON error, from the server or Node's parser (which sends no body).
    if (a.body && !/^\{"error":"/.test(a.body)) return `error body not JSON: ${a.body.slice(0, 100)}`;
  }
  return undefined;
}

describe('bad-request catalogue over HTTPS', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve();
  });
  afterAll(async () => {
    await served?.close();
  });

  it('has at least 40 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const answer = await c.send(served);
    if (process.env['CATALOGUE_PRINT'])
      process.stderr.write(
        `| ${c.name} | ${answer.status} | ${answer.body.slice(0, 110).replace(/\|/g, '\\|')} |\n`,
      );
    expect(problem(c, answer, 'cat-uid'), c.name).toBeUndefined();
    expect(await goodReviewProblem(served.agent, served.server.port), `after: ${c.name}`).toBeUndefined();
  });

  it('an over-limit body is answered 413 while the client is still sending, then closed cleanly, not reset', async () => {
    // The client sends its whole 8 MiB body, however early the answer comes, and reads until the
    // connection closes. The server reads (and discards) the rest of the body before it closes, so the
    // client finishes sending and reads the 413. Closing at once would leave the body unread, and the
    // server's kernel would answer the client's next bytes with a reset (EPIPE or ECONNRESET),
    // which can take the unread 413 with it. A FIN ('end') alone is not the end here: a reset can follow it.
    const a = await upload({
      port: served.server.port,
      ca: served.ca,
      declaredBytes: LIMIT + MiB,
      timeoutMs: 15_000,
    });
    expect(a.errorCode).toBeUndefined();
    expect(a.ended).toBe('closed');
    expect(a.sentAll).toBe(true);
    expect(a.status).toBe(413);
    expect(a.text).toContain(`{"error":"request body is larger than ${LIMIT} bytes"}`);
  });

  it('slow headers (1 byte a second) are cut off after the 10 s headers timeout; serving goes on', async () => {
    const head = 'POST /validate HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n';
    const pieces = [...head].flatMap((ch) => [ch, { pauseMs: 1_000 }]);
    const slow = rawExchange(served.server.port, served.ca, pieces, 20_000, false);
    await sleep(1_500);
    expect(await goodReviewProblem(served.agent, served.server.port)).toBeUndefined();
    const a = await slow;
    // Cut off by the server, not by the client's 20 s limit, and not before the 10 s
    // headers timeout (checked once a second, hence 9 s). No upper figure: a loaded
    // machine only makes it later.
    expect(a.ended).toBe('closed');
    expect(a.elapsedMs).toBeGreaterThan(9_000);
    // Node answers 408 (Request Timeout) and closes.
    expect([0, 408]).toContain(a.status);
    expect(await goodReviewProblem(served.agent, served.server.port)).toBeUndefined();
  }, 30_000);

  it('the server is still the same process', () => {
    expect(served.server.process.exitCode).toBeNull();
    expect(served.server.logs().some((l) => l.includes('"level":50') || l.includes('"level":60'))).toBe(
      false,
    );
  });
});
