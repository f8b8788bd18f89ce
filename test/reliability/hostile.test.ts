/**
 * Hostile clients over real HTTPS, one attack at a time against one served
 * webhook (default flags), each beside an ordinary client. For every attack:
 * the server is still running, no answer is a 500, every ordinary review was
 * answered correctly, and the server's RSS stayed under RSS_BOUND_MIB.
 *
 * The bound: the chart's memory limit is 256 MiB; a pod near its limit is
 * OOM-killed without warning, and V8 needs room to collect garbage, so a
 * replica must stay at three quarters of it (192 MiB) under any one attack.
 * Idle RSS is about 80 MiB. The server runs with the heap the chart gives a replica (POD_NODE_ARGS).
 *
 * Scales here are chosen to run in about a minute on 2 cores; `npm run bench -- attack`
 * runs the full sizes (bench/attack.ts) and docs/dev/reliability.md has both.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  deepAddressValue,
  deepBodies,
  flatBodies,
  formatReport,
  hugeStatusMutate,
  POD_NODE_ARGS,
  idleTlsConnections,
  silentTcpConnections,
  type AttackReport,
  type AttackTarget,
} from '../kit/attacks.js';
import { httpStatus } from '../kit/http.js';
import { eventually, sleep } from '../kit/eventually.js';
import { goodReviewProblem, serve, type Served } from './helpers.js';

const RSS_BOUND_MIB = 192;
/**
 * How much 4,000 connections that never send a byte may grow the server's
 * anonymous RSS over its own baseline, taken just before in the same run.
 * Measured at load 11-16 on 2 cores: +9-10 MiB (Node 20) and +12-17 MiB
 * (Node 24) with the guard; +43-47 and +54-57 MiB with it bypassed (TLS state
 * from accept). The general bound (192 MiB of VmRSS) passes either way; this
 * one is about twice the worst guarded growth, two thirds of the least bypassed.
 */
const SILENT_TCP_GROWTH_MIB = 32;
const run = promisify(execFile);

/** The server's anonymous RSS now (MiB): its heap and native memory, without the mapped node binary. */
function rssAnonMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^RssAnon:\s+(\d+) kB/m.exec(status)?.[1]) / 1024;
}

function expectHeld(report: AttackReport, served: Served, rssBound = RSS_BOUND_MIB) {
  process.stderr.write(`hostile: ${formatReport(report)}\n`);
  expect(served.server.process.exitCode, 'server exited').toBeNull();
  expect(report.statuses['500'] ?? 0, '500 answers').toBe(0);
  expect(report.ordinaryFailures.slice(0, 3)).toEqual([]);
  expect(report.ordinaryOk).toBeGreaterThan(0);
  expect(report.peakRssMiB).toBeLessThan(rssBound);
}

/**
 * Each attack gets a fresh server: V8 keeps the heap an earlier attack grew,
 * and the bound is about one attack against a replica at rest.
 */
describe('hostile clients (default caps)', () => {
  let served: Served;
  let target: AttackTarget;
  beforeEach(async () => {
    served = await serve([], 'hostile-', POD_NODE_ARGS);
    target = { port: served.server.port, pid: served.server.pid, ca: served.ca };
  }, 30_000);
  afterEach(() => served.close());

  it('bodies of millions of nested arrays are refused before parsing', async () => {
    const report = await deepBodies(target, 3_500_000, 4, 2);
    expectHeld(report, served);
    expect(report.statuses).toEqual({ '400': 8 });
  }, 60_000);

  it('a 5,000-deep address value gets a review from both webhooks', async () => {
    const report = await deepAddressValue(target);
    expectHeld(report, served);
    expect(report.statuses).toEqual({ '200': 2 });
  }, 30_000);

  it('1,500 idle TLS connections: held to the cap, older ones closed to make room (which one: the eviction test below)', async () => {
    const report = await idleTlsConnections(target, 1_500, 2_000);
    expectHeld(report, served);
    expect(report.statuses['open-at-end']).toBeLessThanOrEqual(1_000);
  }, 90_000);

  it('4,000 TCP connections that never start TLS cost no TLS memory', async () => {
    // The reviews the ordinary client will send, once, so their code and heap are in the baseline.
    for (let i = 0; i < 5; i++) expect(await goodReviewProblem(served.agent, target.port)).toBeUndefined();
    const before = rssAnonMiB(target.pid);
    const report = await silentTcpConnections(target, 4_000);
    const grew = report.peakAnonMiB - before;
    process.stderr.write(
      `hostile: silent TCP: RssAnon ${before.toFixed(1)} MiB before, peak +${grew.toFixed(1)} MiB\n`,
    );
    expectHeld(report, served);
    expect(grew).toBeLessThan(SILENT_TCP_GROWTH_MIB);
  }, 60_000);

  it('/mutate of a status with 100,000 addresses', async () => {
    const report = await hugeStatusMutate(target, 100_000);
    expectHeld(report, served);
    // The engine judges a list past the CRD's 16 items without walking it: a short answer.
    expect(report.notes.join()).toMatch(/answer \d{1,4} bytes/);
    expect(report.statuses).toEqual({ '200': 1 });
  }, 60_000);

  it('16 concurrent flat 6 MB bodies wait for the body budget', async () => {
    const report = await flatBodies(target, 16, 6_000_000);
    // One body in flight at a time (6 MB of the 8 MiB budget), but the garbage of sixteen parsed 6 MB
    // bodies stays until V8 collects: peak 153-194 MiB on Node 24 (of which ~79 MiB are pages of the
    // node binary; anonymous 74-115 MiB), 106-113 MiB on Node 20. Bound: 7/8 of the chart's limit,
    // 30 MiB above the worst run seen. In a real 256 MiB cgroup (podman --memory=256m, the image, the
    // chart's flags) the cgroup's usage peaked at 93-130 MiB (docs/dev/reliability.md).
    expectHeld(report, served, 224);
    const answered = (report.statuses['200'] ?? 0) + (report.statuses['429'] ?? 0);
    expect(answered).toBe(16);
  }, 90_000);

  it('a 1 MiB namespace makes no 1 MiB log line', async () => {
    const review = JSON.parse(
      JSON.stringify((await import('../kit/payloads.js')).createSmallReview('long-namespace')),
    ) as { request: { namespace: string; object: { spec: { addresses: { routability?: string }[] } } } };
    review.request.namespace = 'n'.repeat(1 << 20);
    // Denied (a routability typo), so its line is at info: a routine allowed review logs at debug.
    review.request.object.spec.addresses[0]!.routability = 'cluster';
    const { post } = await import('../kit/webhook-client.js');
    const reply = await post({ agent: served.agent, port: target.port, body: JSON.stringify(review) });
    expect(reply.status).toBe(200);
    const line = served.server.logs().find((l) => l.includes('"uid":"long-namespace"'));
    expect(line).toBeDefined();
    expect(line!.length).toBeLessThan(4_096);
  });
});

/** Opens a TLS connection and sends one request on it; resolves once the answer arrived, the connection kept. */
function idleConnection(port: number, ca: string): Promise<{ socket: TLSSocket; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    let closed = false;
    const socket = tlsConnect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
    socket.on('error', () => {});
    socket.once('close', () => (closed = true));
    socket.once('end', () => (closed = true));
    socket.once('secureConnect', () => socket.write('GET /idle HTTP/1.1\r\nHost: localhost\r\n\r\n'));
    socket.once('data', () => resolve({ socket, closed: () => closed }));
    socket.once('close', () => reject(new Error('closed before its answer')));
  });
}

describe('eviction at the connection cap', () => {
  const CAP = 20;
  let served: Served;
  beforeAll(async () => {
    served = await serve(['--max-connections', String(CAP)], 'hostile-evict-');
  }, 30_000);
  afterAll(() => served.close());

  it('the connection idle the longest is the one closed to make room, one per newcomer', async () => {
    // One at a time, each answered before the next: idle since in opening order, no handshake pending.
    const opened: { socket: TLSSocket; closed: () => boolean }[] = [];
    try {
      for (let i = 0; i < CAP + 10; i++) opened.push(await idleConnection(served.server.port, served.ca));
      await eventually(() => opened.filter((c) => c.closed()).length >= 10, 'ten connections closed', 5_000);
      await sleep(200);
      // Each newcomer past the cap closed the oldest idle one: the first ten, in order; the last twenty open.
      expect(opened.map((c) => (c.closed() ? 'closed' : 'open'))).toEqual([
        ...Array<string>(10).fill('closed'),
        ...Array<string>(CAP).fill('open'),
      ]);
    } finally {
      for (const c of opened) c.socket.destroy();
    }
  }, 30_000);
});

describe('file descriptors', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve(['--max-connections', '200'], 'hostile-fd-');
    // Lower the running server's open-file limit to just above its cap.
    await run('prlimit', ['--pid', String(served.server.pid), '--nofile=300:300']);
  }, 30_000);
  afterAll(() => served.close());

  it('with the cap below the open-file limit, 600 connections leave reviews and /healthz working', async () => {
    const sockets: Socket[] = [];
    for (let i = 0; i < 600; i++) {
      const s = netConnect(served.server.port, '127.0.0.1');
      s.on('error', () => {});
      sockets.push(s);
    }
    await sleep(1_000);
    try {
      expect(await httpStatus(served.server.healthPort!, '/healthz', 3_000)).toBe(200);
      expect(await goodReviewProblem(served.agent, served.server.port)).toBeUndefined();
      const metrics = await (await fetch(`http://127.0.0.1:${served.server.healthPort}/metrics`)).text();
      expect(metrics).toMatch(/routability_webhook_refused_total\{reason="evicted-handshake"\} [1-9]/);
      expect(Number(/routability_webhook_connections_open (\d+)/.exec(metrics)?.[1])).toBeLessThanOrEqual(
        200,
      );
    } finally {
      for (const s of sockets) s.destroy();
    }
    expect(served.server.logs().some((l) => l.includes('connection limit reached'))).toBe(true);
  }, 30_000);
});
