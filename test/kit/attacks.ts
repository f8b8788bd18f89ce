/**
 * Hostile clients against a served webhook (127.0.0.1 only), each run beside an
 * ordinary client whose reviews must keep being answered, with the server's
 * RSS sampled from /proc. Used by test/reliability/hostile.test.ts (small
 * scale, in CI) and bench/attack.ts (`npm run bench -- attack`, larger scale).
 */
import { readFileSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { Agent } from 'node:https';
import { keepAliveAgent, post, reviewProblem, type Reply } from './webhook-client.js';
import { createSmallReview, uidFor, type JsonObject } from './payloads.js';
import { sleep } from './eventually.js';
import { sampleMemoryParts } from './process-stats.js';
import { repoRoot } from './server-process.js';

/**
 * The V8 heap of a replica the chart runs: the chart's default
 * `webhook.nodeOptions` (NODE_OPTIONS in the pod), read from its values.yaml so
 * that the tests follow the chart. On an unconstrained machine V8 would
 * otherwise size itself from the host's memory (Node 24: 64 MiB of young
 * generation, which the pod never has) and collect far later than a replica.
 * Without the flags Node sizes V8 from the cgroup: in `podman run
 * --memory=256m` both Node 20 and Node 24 report a 256 MiB old generation and
 * 1 MiB semi-spaces.
 */
export const POD_NODE_ARGS: readonly string[] = chartNodeOptions();

function chartNodeOptions(): string[] {
  const values = readFileSync(
    join(repoRoot(), 'charts', 'gateway-routability-webhook', 'values.yaml'),
    'utf8',
  );
  const line = /^ {2}nodeOptions: "([^"]*)"$/m.exec(values);
  if (!line) throw new Error('charts/gateway-routability-webhook/values.yaml: no webhook.nodeOptions line');
  return line[1]!.split(' ').filter(Boolean);
}

export interface AttackTarget {
  readonly port: number;
  readonly pid: number;
  readonly ca: string;
}

export interface AttackReport {
  readonly name: string;
  /** Peak RSS of the server during the attack, MiB. */
  readonly peakRssMiB: number;
  /**
   * Peak anonymous RSS, MiB: RSS without the pages mapped from files (mostly the
   * node binary: ~42 MiB on Node 20, ~79 MiB on Node 24), which the kernel can
   * drop and read again under pressure.
   */
  readonly peakAnonMiB: number;
  /** RSS after the attack ended and its connections closed, MiB. */
  readonly afterRssMiB: number;
  /** The ordinary client's reviews: answered correctly / not. */
  readonly ordinaryOk: number;
  readonly ordinaryFailures: string[];
  readonly ordinaryMaxMs: number;
  /** HTTP statuses the attack's own requests got, by code. */
  readonly statuses: Record<string, number>;
  readonly notes: string[];
}

let ordinaryCount = 0;

/** An ordinary client: one small review every `everyMs` on its own keep-alive connection. */
function ordinaryClient(target: AttackTarget, everyMs = 100) {
  const agent = keepAliveAgent(target.ca, 2);
  let running = true;
  let ok = 0;
  let maxMs = 0;
  const failures: string[] = [];
  const loop = (async () => {
    while (running) {
      const uid = uidFor(0x6000_0000 + ordinaryCount++);
      const started = performance.now();
      try {
        const reply = await post({
          agent,
          port: target.port,
          path: '/validate?timeout=10s',
          body: JSON.stringify(createSmallReview(uid)),
          timeoutMs: 10_000,
        });
        const problem = reply.status === 200 ? reviewProblem(reply.body, uid) : `HTTP ${reply.status}`;
        if (problem) failures.push(problem);
        else ok++;
      } catch (err) {
        failures.push((err as Error).message);
      }
      maxMs = Math.max(maxMs, performance.now() - started);
      await sleep(everyMs);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      agent.destroy();
      return { ok, failures, maxMs };
    },
  };
}

/** Runs `attack` beside an ordinary client, sampling RSS; `settleMs` after it for the "after" figure. */
export async function runAttack(
  name: string,
  target: AttackTarget,
  attack: (statuses: Record<string, number>, notes: string[]) => Promise<void>,
  settleMs = 1_000,
): Promise<AttackReport> {
  const statuses: Record<string, number> = {};
  const notes: string[] = [];
  const memory = sampleMemoryParts(target.pid, 100);
  const ordinary = ordinaryClient(target);
  await sleep(200);
  await attack(statuses, notes);
  await sleep(settleMs);
  const result = await ordinary.stop();
  const samples = memory.stop();
  return {
    name,
    peakRssMiB: Math.max(...samples.rss),
    peakAnonMiB: Math.max(...samples.anon),
    afterRssMiB: samples.rss.at(-1)!,
    ordinaryOk: result.ok,
    ordinaryFailures: result.failures,
    ordinaryMaxMs: result.maxMs,
    statuses,
    notes,
  };
}

const count = (statuses: Record<string, number>, key: string | number) => {
  statuses[String(key)] = (statuses[String(key)] ?? 0) + 1;
};

/** Posts `bodies` at once from fresh connections; counts statuses (or the error). */
async function postAll(
  target: AttackTarget,
  bodies: (() => Buffer)[],
  statuses: Record<string, number>,
  path = '/validate?timeout=10s',
): Promise<Reply[]> {
  const agent: Agent = keepAliveAgent(target.ca, bodies.length);
  try {
    const settled = await Promise.allSettled(
      bodies.map((body) => post({ agent, port: target.port, path, body: body(), timeoutMs: 30_000 })),
    );
    const replies: Reply[] = [];
    for (const s of settled) {
      if (s.status === 'fulfilled') {
        count(statuses, s.value.status);
        replies.push(s.value);
      } else count(statuses, (s.reason as Error).message.slice(0, 40));
    }
    return replies;
  } finally {
    agent.destroy();
  }
}

function reviewWith(uid: string, edit: (object: JsonObject) => void): JsonObject {
  const review = createSmallReview(uid) as { request: { object: JsonObject } };
  edit(review.request.object);
  return review as unknown as JsonObject;
}

/** A review whose annotation holds `levels` nested arrays (the body is about 2 × levels bytes). */
export function deepAnnotationBody(levels: number): Buffer {
  const text = JSON.stringify(
    reviewWith('deep', (o) => ((o['metadata'] as JsonObject)['annotations'] = { a: '@DEEP@' })),
  );
  return Buffer.from(text.replace('"@DEEP@"', '['.repeat(levels) + ']'.repeat(levels)));
}

/** Row 1: large bodies of nested arrays, `clients` at once, `rounds` times. */
export function deepBodies(target: AttackTarget, levels: number, clients: number, rounds: number) {
  return runAttack(
    `${clients} × ${levels.toLocaleString('en')}-level bodies × ${rounds}`,
    target,
    async (st) => {
      const body = deepAnnotationBody(levels);
      for (let r = 0; r < rounds; r++)
        await postAll(
          target,
          Array.from({ length: clients }, () => () => body),
          st,
        );
    },
  );
}

/** Row 2: a 5,000-deep array where an address value belongs, to both webhooks. */
export function deepAddressValue(target: AttackTarget) {
  return runAttack('5,000-deep address value', target, async (st, notes) => {
    const review = reviewWith('deep-value', (o) => {
      (o['spec'] as JsonObject)['addresses'] = [{ type: 'IPAddress', value: '@DEEP@' }];
    });
    const text = JSON.stringify(review).replace('"@DEEP@"', '['.repeat(5_000) + ']'.repeat(5_000));
    for (const path of ['/validate?timeout=10s', '/mutate?timeout=10s']) {
      const [reply] = await postAll(target, [() => Buffer.from(text)], st, path);
      if (reply)
        notes.push(
          `${path.split('?')[0]}: HTTP ${reply.status}, ${reviewProblem(reply.body, 'deep-value') ?? 'a review for the uid'}`,
        );
    }
  });
}

/**
 * Opens TLS connections, sends one request on each and keeps it open idle
 * (keep-alive), as a client parking connections would; resolves the sockets.
 */
async function openTlsConnections(target: AttackTarget, n: number, parallel = 50): Promise<TLSSocket[]> {
  const sockets: TLSSocket[] = [];
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      await new Promise<void>((done) => {
        const socket = tlsConnect({
          host: '127.0.0.1',
          port: target.port,
          ca: target.ca,
          servername: 'localhost',
        });
        socket.once('secureConnect', () => socket.write('GET /idle HTTP/1.1\r\nHost: localhost\r\n\r\n'));
        socket.once('data', () => done());
        socket.on('error', () => done());
        socket.once('close', () => done());
        sockets.push(socket);
      });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return sockets;
}

/** Row 3: `n` idle TLS connections held for `holdMs`, then closed. */
export function idleTlsConnections(target: AttackTarget, n: number, holdMs: number) {
  return runAttack(
    `${n.toLocaleString('en')} idle TLS connections, held ${holdMs / 1000} s`,
    target,
    async (st, notes) => {
      const sockets = await openTlsConnections(target, n);
      await sleep(holdMs);
      const stillOpen = sockets.filter(
        (s) => !s.destroyed && !s.readableEnded && s.readyState === 'open',
      ).length;
      notes.push(`${stillOpen} of ${n} still open after ${holdMs / 1000} s (the rest closed by the server)`);
      st['open-at-end'] = stillOpen;
      for (const s of sockets) s.destroy();
    },
    2_000,
  );
}

/** Row 4: `n` TCP connections that never start TLS, then closed by the client. */
export function silentTcpConnections(target: AttackTarget, n: number, holdMs = 1_000) {
  return runAttack(
    `${n.toLocaleString('en')} TCP connections without TLS, closed by the client`,
    target,
    async () => {
      const sockets: Socket[] = [];
      for (let i = 0; i < n; i++) {
        const s = netConnect(target.port, '127.0.0.1');
        s.on('error', () => {});
        sockets.push(s);
        if (i % 200 === 199) await sleep(10);
      }
      await sleep(holdMs);
      for (const s of sockets) s.destroy();
    },
    2_000,
  );
}

/** Row 6: /mutate of a status with `addresses` addresses. */
export function hugeStatusMutate(target: AttackTarget, addresses: number) {
  return runAttack(
    `/mutate of a status with ${addresses.toLocaleString('en')} addresses`,
    target,
    async (st, notes) => {
      const review = reviewWith('huge-status', (o) => {
        o['status'] = {
          addresses: Array.from({ length: addresses }, (_, i) => ({
            type: 'IPAddress',
            value: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
          })),
        };
      }) as { request: JsonObject };
      review.request['subResource'] = 'status';
      review.request['operation'] = 'UPDATE';
      // The stored object had no status addresses (the apiserver's 3 MiB limit holds one such list, not two).
      review.request['oldObject'] = { ...(review.request['object'] as JsonObject), status: {} };
      const [reply] = await postAll(
        target,
        [() => Buffer.from(JSON.stringify(review))],
        st,
        '/mutate?timeout=10s',
      );
      if (reply) notes.push(`answer ${reply.body.length.toLocaleString('en')} bytes`);
    },
  );
}

/** Row 7: `clients` flat bodies of `bytes` each, at once. */
export function flatBodies(target: AttackTarget, clients: number, bytes: number) {
  return runAttack(`${clients} concurrent flat ${(bytes / 1e6).toFixed(0)} MB bodies`, target, async (st) => {
    const base = JSON.stringify(
      reviewWith('flat', (o) => ((o['metadata'] as JsonObject)['annotations'] = { pad: '@PAD@' })),
    );
    const body = Buffer.from(base.replace('@PAD@', 'x'.repeat(bytes - base.length)));
    await postAll(
      target,
      Array.from({ length: clients }, () => () => body),
      st,
    );
  });
}

export function formatReport(r: AttackReport): string {
  const statuses = Object.entries(r.statuses)
    .map(([k, v]) => `${k}×${v}`)
    .join(' ');
  return (
    `${r.name}: peak RSS ${r.peakRssMiB.toFixed(0)} MiB (anonymous ${r.peakAnonMiB.toFixed(0)}), after ${r.afterRssMiB.toFixed(0)} MiB; ` +
    `ordinary reviews ${r.ordinaryOk} ok, ${r.ordinaryFailures.length} failed, slowest ${r.ordinaryMaxMs.toFixed(0)} ms; ` +
    `attack answers ${statuses || '-'}${r.notes.length ? `; ${r.notes.join('; ')}` : ''}`
  );
}
