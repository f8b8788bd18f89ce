/**
 * HTTP-level fuzzing: valid reviews mutated by a seeded generator, sent over
 * HTTPS, every answer checked. Used by `npm run bench -- fuzz` (100,000 requests) and by
 * test/reliability/fuzz.test.ts (a few thousand, in CI). Case `i` of seed `s`
 * is reproducible on its own: its generator is seeded with (s, i).
 */
import type { Agent } from 'node:https';
import { post, reviewProblem } from './webhook-client.js';
import {
  PAYLOAD_BUILDERS,
  PAYLOAD_PATHS,
  uidFor,
  type Json,
  type JsonObject,
  type PayloadName,
} from './payloads.js';

/** mulberry32: small, fast, good enough to pick mutations. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FuzzCase {
  readonly seed: number;
  readonly index: number;
  readonly path: string;
  readonly body: Buffer;
  readonly mutations: readonly string[];
}

const ODD_STRINGS = [
  '',
  ' ',
  'Cluster',
  'External',
  'cluster',
  'Public',
  'example.com/CorpWan',
  'x'.repeat(254),
  '10.96.0.0',
  '10.111.255.255',
  '10.96.0.10',
  '0.0.0.0',
  '255.255.255.255',
  '::',
  '::ffff:10.96.0.5',
  'fd00:10:96::',
  'fe80::1%eth0',
  '010.096.000.001',
  '1.2.3',
  'gw.svc.cluster.local',
  '*.example.com',
  '__proto__',
  'constructor',
  'toString',
  '\u0000',
  '\ud800',
  '😀'.repeat(10),
  'Hostname',
  'IPAddress',
  'NamedAddress',
  'test/fake-invalid-type',
  'status',
  'CREATE',
  'UPDATE',
  'DELETE',
  'CONNECT',
];
const KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'uid',
  'routability',
  'value',
  'type',
  'addresses',
  'status',
  '',
];

/** Sets an own property, `__proto__` included (plain assignment would set the prototype). */
function setOwn(node: JsonObject | Json[], key: string | number, value: Json): void {
  Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true });
}

function pick<T>(rand: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)]!;
}

function randomValue(rand: () => number, depth = 0): Json {
  const r = rand();
  if (r < 0.12) return null;
  if (r < 0.22) return rand() < 0.5;
  if (r < 0.34) return pick(rand, [0, -1, 1, 1.5, 1e308, -0, 2 ** 53 + 1, 4294967296, 16]);
  if (r < 0.7) return pick(rand, ODD_STRINGS);
  if (r < 0.85 && depth < 3)
    return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(rand, depth + 1));
  if (depth < 3) {
    const o: JsonObject = {};
    for (let i = Math.floor(rand() * 3); i > 0; i--)
      setOwn(o, pick(rand, KEYS), randomValue(rand, depth + 1));
    return o;
  }
  return 'leaf';
}

/** Every container (object or array) with the path to it. */
function containers(
  root: Json,
  out: { node: JsonObject | Json[]; path: string }[] = [],
  path = '$',
): typeof out {
  if (root === null || typeof root !== 'object') return out;
  out.push({ node: root, path });
  if (Array.isArray(root)) root.forEach((v, i) => containers(v, out, `${path}[${i}]`));
  else for (const [k, v] of Object.entries(root)) containers(v, out, `${path}.${k}`);
  return out;
}

/** Biased towards the parts the server reads: the envelope, addresses, conditions. */
function target(rand: () => number, review: JsonObject): { node: JsonObject | Json[]; path: string } {
  const all = containers(review);
  const focused = all.filter((c) =>
    /request(\.(kind|resource|object|oldObject))?$|addresses|conditions|spec$|status$/.test(c.path),
  );
  return pick(rand, rand() < 0.7 && focused.length > 0 ? focused : all);
}

function mutateTree(rand: () => number, review: JsonObject, log: string[]): void {
  const { node, path } = target(rand, review);
  const keys: (string | number)[] = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
  const op = rand();
  if (keys.length > 0 && op < 0.3) {
    const k = pick(rand, keys);
    const v = randomValue(rand);
    setOwn(node, k, v);
    log.push(`set ${path}[${JSON.stringify(k)}] = ${JSON.stringify(v)?.slice(0, 60)}`);
  } else if (keys.length > 0 && op < 0.5) {
    const k = pick(rand, keys);
    if (Array.isArray(node)) node.splice(Number(k), 1);
    else delete node[String(k)];
    log.push(`delete ${path}[${JSON.stringify(k)}]`);
  } else if (op < 0.65) {
    const k = Array.isArray(node) ? node.length : pick(rand, KEYS);
    const v = randomValue(rand);
    setOwn(node, k, v);
    log.push(`add ${path}[${JSON.stringify(k)}] = ${JSON.stringify(v)?.slice(0, 60)}`);
  } else if (op < 0.75 && Array.isArray(node) && node.length > 0) {
    const copies = 1 + Math.floor(rand() * 40);
    for (let i = 0; i < copies; i++) node.push(structuredClone(node[0]!));
    log.push(`grow ${path} by ${copies}`);
  } else if (op < 0.85) {
    const request = review['request'];
    if (request && typeof request === 'object' && !Array.isArray(request)) {
      const r = rand();
      const ops = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];
      if (r < 0.4) request['operation'] = pick(rand, ops);
      else if (r < 0.7) request['subResource'] = rand() < 0.5 ? 'status' : '';
      else request['oldObject'] = structuredClone(request['object'] ?? null);
      log.push(
        `envelope ${JSON.stringify(request['operation'])} sub=${JSON.stringify(request['subResource'])}`,
      );
    }
  } else {
    const v = randomValue(rand);
    const request = review['request'];
    if (request && typeof request === 'object' && !Array.isArray(request)) {
      request['uid'] = typeof v === 'string' && rand() < 0.5 ? v : `fuzz-${Math.floor(rand() * 1e9)}`;
      log.push(`uid = ${JSON.stringify(request['uid'])}`);
    }
  }
}

/** Byte-level damage after serialisation: mostly invalid JSON, sometimes duplicate keys or odd bytes. */
function mutateText(rand: () => number, text: string, log: string[]): Buffer {
  const op = rand();
  const at = Math.floor(rand() * text.length);
  if (op < 0.25) {
    log.push(`truncate at ${at}`);
    return Buffer.from(text.slice(0, at));
  }
  if (op < 0.45) {
    const ch = pick(rand, ['{', '}', '[', ']', '"', ',', ':', '\\', 'x', '\u0000', ' ']);
    log.push(`insert ${JSON.stringify(ch)} at ${at}`);
    return Buffer.from(text.slice(0, at) + ch + text.slice(at));
  }
  if (op < 0.6) {
    log.push(`duplicate uid key`);
    return Buffer.from(text.replace('"uid":', '"uid":"first-of-two","uid":'));
  }
  if (op < 0.75) {
    const bytes = Buffer.from(text);
    const b = pick(rand, [0xff, 0xc3, 0x80, 0xed, 0xa0, 0x00]);
    bytes[Math.min(at, bytes.length - 1)] = b;
    log.push(`byte 0x${b.toString(16)} at ${at}`);
    return bytes;
  }
  if (op < 0.85) {
    log.push('wrapped in an array');
    return Buffer.from(`[${text}]`);
  }
  log.push('leading and trailing whitespace');
  return Buffer.from(`\n\t ${text} \r\n`);
}

export function fuzzCase(seed: number, index: number): FuzzCase {
  const rand = prng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const name = pick(rand, Object.keys(PAYLOAD_BUILDERS) as PayloadName[]);
  const review = PAYLOAD_BUILDERS[name](uidFor(index));
  const log: string[] = [name];
  const rounds = 1 + Math.floor(rand() * 4);
  for (let i = 0; i < rounds; i++) mutateTree(rand, review, log);
  const text = JSON.stringify(review);
  const body = rand() < 0.2 ? mutateText(rand, text, log) : Buffer.from(text);
  const path = rand() < 0.85 ? PAYLOAD_PATHS[name] : name === 'status-mutate' ? '/validate' : '/mutate';
  return { seed, index, path: `${path}?timeout=10s`, body, mutations: log };
}

export interface FuzzFailure {
  readonly seed: number;
  readonly index: number;
  readonly reason: string;
  readonly mutations: readonly string[];
  readonly status?: number;
}

export interface FuzzTally {
  sent: number;
  byStatus: Record<string, number>;
  allowed: number;
  denied: number;
  patched: number;
  failures: FuzzFailure[];
}

/** What the body says, read as the server reads it (JSON.parse of UTF-8). */
function expectation(body: Buffer): { json: boolean; uid?: string; apiVersion?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { json: false };
  }
  const review = parsed as { apiVersion?: unknown; request?: { uid?: unknown } } | null;
  const uid = review && typeof review === 'object' ? review.request?.uid : undefined;
  const apiVersion = review && typeof review === 'object' ? review.apiVersion : undefined;
  return {
    json: true,
    ...(typeof uid === 'string' ? { uid } : {}),
    ...(typeof apiVersion === 'string' ? { apiVersion } : {}),
  };
}

/** Checks one answer; returns why it is wrong, or undefined. */
export function judge(c: FuzzCase, status: number, body: string): string | undefined {
  const expected = expectation(c.body);
  if (status >= 500) return `HTTP ${status}`;
  if (status === 200) {
    if (!expected.json) return '200 for a body that is not JSON';
    if (expected.uid === undefined) return '200 without a string uid in the request';
    return reviewProblem(body, expected.uid, expected.apiVersion);
  }
  if (status === 400) {
    try {
      const parsed = JSON.parse(body) as { error?: unknown };
      if (typeof parsed.error !== 'string') return '400 without an error string';
    } catch {
      return '400 body is not JSON';
    }
    return undefined;
  }
  if (status === 413) return c.body.length > 7 * 1024 * 1024 ? undefined : '413 for a small body';
  return `unexpected HTTP ${status}`;
}

/** Sends cases [from, to) with `concurrency` requests in flight; stops early after `maxFailures`. */
export async function runFuzz(opts: {
  agent: Agent;
  port: number;
  seed: number;
  count: number;
  concurrency: number;
  maxFailures?: number;
  deadlineMs?: number;
  onProgress?: (tally: FuzzTally) => void;
}): Promise<FuzzTally> {
  const tally: FuzzTally = { sent: 0, byStatus: {}, allowed: 0, denied: 0, patched: 0, failures: [] };
  const deadline = performance.now() + (opts.deadlineMs ?? 600_000);
  let next = 0;
  const worker = async () => {
    while (
      next < opts.count &&
      tally.failures.length < (opts.maxFailures ?? 20) &&
      performance.now() < deadline
    ) {
      const c = fuzzCase(opts.seed, next++);
      let status = 0;
      let reason: string | undefined;
      try {
        const reply = await post({
          agent: opts.agent,
          port: opts.port,
          path: c.path,
          body: c.body,
          timeoutMs: 10_000,
        });
        status = reply.status;
        reason = judge(c, reply.status, reply.body);
        if (status === 200 && !reason) {
          const response = (JSON.parse(reply.body) as { response: { allowed: boolean; patch?: string } })
            .response;
          if (response.patch) tally.patched++;
          else if (response.allowed) tally.allowed++;
          else tally.denied++;
        }
      } catch (err) {
        reason = `request failed: ${(err as Error).message}`;
      }
      tally.sent++;
      tally.byStatus[String(status)] = (tally.byStatus[String(status)] ?? 0) + 1;
      if (reason)
        tally.failures.push({ seed: c.seed, index: c.index, reason, mutations: c.mutations, status });
      if (opts.onProgress && tally.sent % 10_000 === 0) opts.onProgress(tally);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  return tally;
}
