/**
 * Latency at the load a cluster really sends: a few keep-alive HTTPS
 * connections, each sending one review, waiting for the whole answer, then
 * sending the next. Raw TLS sockets and a request built once keep the
 * client's own cost per request small and identical for every server, so
 * the difference between two servers' latencies is the servers' difference.
 * Times are taken with performance.now() (sub-microsecond resolution).
 */
import { connect, type TLSSocket } from 'node:tls';

export interface LatencyFigure {
  readonly requests: number;
  /** Microseconds. */
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly mean: number;
  /** Answers that were not 200 with the expected body. */
  readonly failures: number;
}

interface Options {
  readonly port: number;
  readonly ca: string;
  readonly path: string;
  readonly body: string;
  readonly connections: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  /** The exact answer expected (anything else is a failure). */
  readonly expectBody: string;
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** One connection's loop; pushes each request's latency (µs) while `recording()`. */
function runConnection(
  opts: Options,
  until: number,
  recording: () => boolean,
  out: number[],
  failed: () => void,
): Promise<void> {
  const body = Buffer.from(opts.body);
  const request = Buffer.concat([
    Buffer.from(
      `POST ${opts.path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
      'latin1',
    ),
    body,
  ]);
  const expected = Buffer.from(opts.expectBody);
  return new Promise((done, fail) => {
    const socket: TLSSocket = connect(
      { host: '127.0.0.1', port: opts.port, ca: opts.ca, servername: 'localhost' },
      () => send(),
    );
    socket.setNoDelay(true);
    let buffered: Buffer[] = [];
    let have = 0;
    let started = 0;
    const send = () => {
      if (performance.now() >= until) {
        socket.end();
        done();
        return;
      }
      buffered = [];
      have = 0;
      started = performance.now();
      socket.write(request);
    };
    socket.on('data', (chunk: Buffer) => {
      buffered.push(chunk);
      have += chunk.length;
      const whole = buffered.length === 1 ? chunk : Buffer.concat(buffered, have);
      const head = whole.indexOf('\r\n\r\n');
      if (head < 0) return;
      const m = /\r\ncontent-length: *(\d+)/i.exec(whole.subarray(0, head).toString('latin1'));
      if (!m) return fail(new Error('answer without content-length'));
      if (have < head + 4 + Number(m[1])) return;
      const elapsed = performance.now() - started;
      const ok =
        whole.subarray(9, 12).toString('latin1') === '200' && whole.subarray(head + 4).equals(expected);
      if (!ok) failed();
      if (recording()) out.push(elapsed * 1000);
      send();
    });
    socket.on('error', fail);
  });
}

/** `connections` sequential clients for warmupMs + durationMs; figures of the last durationMs. */
export async function measureLatency(opts: Options): Promise<LatencyFigure> {
  const start = performance.now();
  const recordFrom = start + opts.warmupMs;
  const until = recordFrom + opts.durationMs;
  const samples: number[] = [];
  let failures = 0;
  await Promise.all(
    Array.from({ length: opts.connections }, () =>
      runConnection(
        opts,
        until,
        () => performance.now() >= recordFrom,
        samples,
        () => failures++,
      ),
    ),
  );
  const sorted = Float64Array.from(samples).sort();
  const round = (x: number) => Math.round(x);
  return {
    requests: sorted.length,
    p50: round(percentile(sorted, 0.5)),
    p90: round(percentile(sorted, 0.9)),
    p99: round(percentile(sorted, 0.99)),
    mean: round(samples.reduce((s, x) => s + x, 0) / Math.max(1, samples.length)),
    failures,
  };
}
