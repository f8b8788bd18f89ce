/**
 * Faults under load, against the built server as a child process:
 * certificate rotation the way a Secret volume does it, SIGTERM while
 * requests are in flight, and slow clients holding connections.
 */
import { copyFile, mkdir, readFile, rename, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  keepAliveAgent,
  peerFingerprint,
  pemFingerprint,
  post,
  reviewProblem,
} from '../kit/webhook-client.js';
import { httpStatus } from '../kit/http.js';
import { makeCerts, spawnWebhook, type Child } from '../kit/server-process.js';
import { tempDir } from '../kit/key-files.js';
import { updateLargeReview } from '../kit/payloads.js';
import { goodReviewProblem } from './helpers.js';

/** Waits until the server's in-flight gauge reaches `n` (requests received, not yet answered). */
async function inflightAtLeast(healthPort: number, n: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const text = await fetch(`http://127.0.0.1:${healthPort}/metrics`)
      .then((r) => r.text())
      .catch(() => '');
    const m = /^routability_webhook_inflight_requests (\d+)/m.exec(text);
    if (m && Number(m[1]) >= n) return;
    if (performance.now() > deadline) throw new Error(`the server never held ${n} requests in flight`);
    await sleep(25);
  }
}
import { percentile, runLoad, slowHeaderClient } from './load.js';
import { sleep } from '../kit/eventually.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function scratch(prefix: string) {
  const tmp = await tempDir(prefix);
  cleanups.push(tmp.remove);
  return tmp.path;
}

function track(child: Child): Child {
  cleanups.push(() => child.stop(2_000));
  return child;
}

describe('certificate rotation under load', () => {
  it('swapping the ..data symlink: zero failed requests, new connections get the new certificate', async () => {
    const dir = await scratch('rotate-');
    const a = await makeCerts(join(dir, 'gen-a'));
    // Another CA name: OpenSSL picks an issuer by subject, so two CAs in one bundle must differ in name.
    const b = await makeCerts(join(dir, 'gen-b'), ['--service', 'rotated-webhook']);
    // The Secret volume layout: timestamped folder, ..data → it, files → ..data/file.
    const volume = join(dir, 'volume');
    const put = async (name: string, from: typeof a) => {
      await mkdir(join(volume, name), { recursive: true });
      await copyFile(from.cert, join(volume, name, 'tls.crt'));
      await copyFile(from.key, join(volume, name, 'tls.key'));
    };
    await put('..2025_11_29_10_00_00.1', a);
    await symlink('..2025_11_29_10_00_00.1', join(volume, '..data'));
    await symlink('..data/tls.crt', join(volume, 'tls.crt'));
    await symlink('..data/tls.key', join(volume, 'tls.key'));

    const server = track(
      await spawnWebhook({
        certs: { cert: join(volume, 'tls.crt'), key: join(volume, 'tls.key') },
        logFile: join(dir, 'server.log'),
      }),
    );
    // Clients trust both CAs, as a caBundle does while a CA rotates.
    const ca = [await readFile(a.ca, 'utf8'), await readFile(b.ca, 'utf8')];
    const before = pemFingerprint(await readFile(a.cert, 'utf8'));
    const after = pemFingerprint(await readFile(b.cert, 'utf8'));
    expect(await peerFingerprint(server.port, ca)).toBe(before);

    let stopping = false;
    const load = runLoad({
      port: server.port,
      ca,
      keepAliveWorkers: 6,
      freshWorkers: 2,
      stop: () => stopping,
      uidPrefix: 'rotate',
      maxRequests: 100_000,
    });
    await sleep(1_000);
    // Atomic swap: a new symlink renamed over ..data.
    await put('..2025_11_29_11_00_00.2', b);
    await symlink('..2025_11_29_11_00_00.2', join(volume, '..data_tmp'));
    await rename(join(volume, '..data_tmp'), join(volume, '..data'));
    await rm(join(volume, '..2025_11_29_10_00_00.1'), { recursive: true });
    const rotatedAt = performance.now();

    let seen = before;
    while (seen !== after && performance.now() - rotatedAt < 15_000) {
      await sleep(50);
      seen = await peerFingerprint(server.port, ca);
    }
    const switchMs = performance.now() - rotatedAt;
    await sleep(1_000);
    stopping = true;
    const result = await load;

    expect(seen, 'a fresh connection gets the new certificate').toBe(after);
    expect([...result.failures].slice(0, 5)).toEqual([]);
    // Served throughout (how many is a throughput figure, for benchmarks).
    expect(result.ok).toBeGreaterThan(0);
    expect(server.logs().some((l) => l.includes('serving certificate reloaded'))).toBe(true);
    process.stderr.write(
      `rotation: ${result.ok} requests, 0 failed, new certificate on fresh connections ${Math.round(switchMs)} ms after the swap, p99 ${percentile(result.latenciesMs, 99).toFixed(1)} ms\n`,
    );
  }, 60_000);
});

describe('SIGTERM under load', () => {
  it('every accepted request completes, readiness goes false, exit 0 within the grace period', async () => {
    const dir = await scratch('sigterm-');
    const certs = await makeCerts(join(dir, 'certs'));
    const ca = await readFile(certs.ca, 'utf8');
    const server = track(
      await spawnWebhook({
        certs,
        logFile: join(dir, 'server.log'),
        extraArgs: ['--shutdown-timeout-seconds', '8'],
        // Allowed reviews without findings are logged at debug: the check below needs their lines.
        logLevel: 'debug',
      }),
    );
    // Requests whose bodies are still arriving when SIGTERM comes: accepted, in flight.
    const slowAgent = keepAliveAgent(ca, 4);
    cleanups.push(async () => slowAgent.destroy());
    const bigBody = JSON.stringify(updateLargeReview('in-flight-@'));
    const inflight = Array.from({ length: 4 }, (_, i) =>
      post({
        agent: slowAgent,
        port: server.port,
        body: bigBody.replace('in-flight-@', `in-flight-${i}`),
        slowBody: { chunkBytes: 2_000, chunkEveryMs: 100 },
        timeoutMs: 20_000,
      }),
    );

    let stopping = false;
    const connectionError = (err: Error) => /ECONNREFUSED|ECONNRESET|socket hang up|EPIPE/.test(err.message);
    const load = runLoad({
      port: server.port,
      ca,
      keepAliveWorkers: 8,
      freshWorkers: 1,
      stop: () => stopping,
      uidPrefix: 'term',
      maxRequests: 100_000,
      tolerate: connectionError,
    });
    // SIGTERM only once the server holds the four slow requests (on a loaded machine their TLS
    // handshakes can take longer than any fixed wait): they are what "accepted, in flight" means here.
    await inflightAtLeast(server.healthPort!, 4, 15_000);
    await sleep(300);
    const sentAt = performance.now();
    server.process.kill('SIGTERM');
    await sleep(300);
    // Readiness must answer 503 while the in-flight bodies drain; a probe that cannot
    // connect at all is not "readiness went false".
    const readyDuringDrain = await httpStatus(server.healthPort!, '/readyz', 2_000);
    const exit = await server.exited;
    const exitMs = exit.at - sentAt;
    stopping = true;
    const [result, answers] = await Promise.all([load, Promise.allSettled(inflight)]);

    // The in-flight requests: all answered 200 with their own uid, with Connection: close.
    answers.forEach((a, i) => {
      expect(a.status, `in-flight ${i}: ${a.status === 'rejected' ? String(a.reason) : ''}`).toBe(
        'fulfilled',
      );
      if (a.status !== 'fulfilled') return;
      expect(a.value.status).toBe(200);
      expect(reviewProblem(a.value.body, `in-flight-${i}`)).toBeUndefined();
      expect(a.value.headers['connection']).toBe('close');
    });
    // Every review the server logged was received by its client: nothing accepted was lost.
    const logged = server
      .logs()
      .filter((l) => l.includes('"msg":"review"'))
      .map((l) => (JSON.parse(l) as { uid: string }).uid)
      .filter((uid) => uid.startsWith('term-'));
    // Each with what its client saw, so a failure says whether it was a reset, a refusal or a timeout.
    const lost = logged
      .filter((uid) => !result.answered.has(uid))
      .map((uid) => `${uid}: ${result.failures.get(uid) ?? result.tolerated.get(uid) ?? 'no error seen'}`);
    expect(lost).toEqual([]);
    // Failures other than "the connection was closed or refused" (which the apiserver retries): none.
    expect([...result.failures].slice(0, 5)).toEqual([]);
    expect(exit.code).toBe(0);
    // A graceful stop: everything finished before the 8 s deadline forced an exit.
    const lines = server.logs();
    expect(lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
    expect(lines.some((l) => l.includes('shutdown timeout reached'))).toBe(false);
    expect(readyDuringDrain).toBe(503);
    const refused = [...result.tolerated.values()].filter((m) => m.includes('ECONNREFUSED')).length;
    process.stderr.write(
      `sigterm: ${result.ok} answered, ${refused} refused after the listener closed, ${result.tolerated.size - refused} reset/hang-up on a closing keep-alive connection, 4/4 in-flight bodies answered, exit ${exit.code} ${Math.round(exitMs)} ms after SIGTERM, /readyz during drain ${readyDuringDrain}\n`,
    );
  }, 60_000);
});

describe('slow clients', () => {
  it('200 connections sending headers one byte a second do not stop a normal client being served', async () => {
    const dir = await scratch('slow-');
    const certs = await makeCerts(join(dir, 'certs'));
    const ca = await readFile(certs.ca, 'utf8');
    const server = track(await spawnWebhook({ certs, logFile: join(dir, 'server.log') }));
    const slow: { stop: () => void }[] = [];
    cleanups.push(async () => slow.forEach((s) => s.stop()));
    for (let batch = 0; batch < 10; batch++)
      slow.push(...(await Promise.all(Array.from({ length: 20 }, () => slowHeaderClient(server.port, ca)))));
    expect(slow).toHaveLength(200);

    const freshAgent = () => keepAliveAgent(ca, 1);
    const kept = keepAliveAgent(ca, 1);
    cleanups.push(async () => kept.destroy());
    // All 200 hold their connection while the normal requests run (the 10 s headers
    // timeout cuts them off later, sooner on a loaded machine, so count them here).
    expect(slow.filter((s) => !(s as { socket?: { destroyed: boolean } }).socket?.destroyed)).toHaveLength(
      200,
    );
    const latencies: number[] = [];
    const problems: string[] = [];
    const until = performance.now() + 5_000;
    while (performance.now() < until) {
      for (const agent of [freshAgent(), kept]) {
        const started = performance.now();
        const problem = await goodReviewProblem(agent, server.port);
        latencies.push(performance.now() - started);
        if (problem) problems.push(problem);
        if (agent !== kept) agent.destroy();
      }
      await sleep(200);
    }
    // Every normal request answered correctly within the client's 5 s timeout (a
    // generous bound for a loaded machine; the latency figures are printed and
    // belong to benchmarks).
    expect(problems).toEqual([]);
    expect(latencies.length).toBeGreaterThanOrEqual(2);
    process.stderr.write(
      `slow clients: 200 dribbling connections; ${latencies.length} normal requests, max ${Math.max(...latencies).toFixed(1)} ms, p50 ${percentile(latencies, 50).toFixed(1)} ms\n`,
    );
  }, 60_000);
});
