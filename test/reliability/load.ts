/** Bounded load loops for the fault tests: every request a unique uid, every answer checked. */
import { Agent } from 'node:https';
import { connect, type TLSSocket } from 'node:tls';
import { post, reviewProblem } from '../kit/webhook-client.js';
import { createSmallReview } from '../kit/payloads.js';
import { sleep } from '../kit/eventually.js';

export interface LoadResult {
  ok: number;
  /** uid → what went wrong. */
  failures: Map<string, string>;
  /** uids answered 200 with a correct review. */
  answered: Set<string>;
  latenciesMs: number[];
}

export interface LoadOptions {
  readonly port: number;
  readonly ca: string | string[];
  /** Workers on keep-alive connections. */
  readonly keepAliveWorkers: number;
  /** Workers that open a fresh TLS connection for every request. */
  readonly freshWorkers?: number;
  readonly stop: () => boolean;
  /** Hard bound on requests, whatever `stop` says. */
  readonly maxRequests?: number;
  readonly uidPrefix: string;
  /** Pause between one worker's requests (a steady load instead of as fast as possible). */
  readonly pauseMs?: number;
  /** Extra check of a well-formed 200 answer (e.g. "must be allowed"). */
  readonly check?: (body: string) => string | undefined;
  /** Classifies a failure as expected (e.g. connection refused after shutdown); those are not counted. */
  readonly tolerate?: (err: Error) => boolean;
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult & { tolerated: Map<string, string> }> {
  const result = {
    ok: 0,
    failures: new Map<string, string>(),
    answered: new Set<string>(),
    latenciesMs: [] as number[],
  };
  const tolerated = new Map<string, string>();
  const keepAlive = new Agent({
    keepAlive: true,
    maxSockets: opts.keepAliveWorkers,
    ca: opts.ca,
    servername: 'localhost',
  });
  let n = 0;
  const max = opts.maxRequests ?? 200_000;
  const worker = async (fresh: boolean) => {
    while (!opts.stop() && n < max) {
      const uid = `${opts.uidPrefix}-${n++}`;
      const agent = fresh ? new Agent({ keepAlive: false, ca: opts.ca, servername: 'localhost' }) : keepAlive;
      const started = performance.now();
      try {
        const reply = await post({
          agent,
          port: opts.port,
          body: JSON.stringify(createSmallReview(uid)),
          // Generous: on a loaded two-core machine the first answers after start-up can take
          // seconds; a client that gave up would count an answered review as lost.
          timeoutMs: 30_000,
        });
        result.latenciesMs.push(performance.now() - started);
        const problem =
          reply.status === 200 ? reviewProblem(reply.body, uid) : `HTTP ${reply.status}: ${reply.body}`;
        if (problem) result.failures.set(uid, problem);
        else {
          result.ok++;
          result.answered.add(uid);
        }
      } catch (err) {
        if (opts.tolerate?.(err as Error)) tolerated.set(uid, (err as Error).message);
        else result.failures.set(uid, (err as Error).message);
        // Do not spin on a refused port.
        await sleep(5);
      } finally {
        if (fresh) agent.destroy();
      }
      if (opts.pauseMs) await sleep(opts.pauseMs);
    }
  };
  await Promise.all([
    ...Array.from({ length: opts.keepAliveWorkers }, () => worker(false)),
    ...Array.from({ length: opts.freshWorkers ?? 0 }, () => worker(true)),
  ]);
  keepAlive.destroy();
  return { ...result, tolerated };
}

/** A client that completes the TLS handshake, then sends request headers one byte every `everyMs`. */
export function slowHeaderClient(
  port: number,
  ca: string,
  everyMs = 1_000,
): Promise<{ socket: TLSSocket; stop: () => void }> {
  return new Promise((done, fail) => {
    const head = Buffer.from(
      'POST /validate?timeout=10s HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n',
    );
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      const tick = () => {
        if (socket.destroyed || i >= head.length) return;
        socket.write(head.subarray(i, ++i));
        timer = setTimeout(tick, everyMs);
      };
      tick();
      done({
        socket,
        stop: () => {
          if (timer) clearTimeout(timer);
          socket.destroy();
        },
      });
    });
    socket.on('error', (err) => {
      if (timer) clearTimeout(timer);
      fail(err);
    });
  });
}

export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
