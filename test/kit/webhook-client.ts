/** A small HTTPS client for reviews: keep-alive agents, bounded timeouts, raw TLS for odd requests. */
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:https';
import { connect, type TLSSocket } from 'node:tls';
import { sleep } from './eventually.js';

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  /** Which TLS connection answered (for keep-alive checks). */
  readonly socketId: number;
}

export function keepAliveAgent(ca: string | Buffer | (string | Buffer)[], maxSockets = 16): Agent {
  return new Agent({ keepAlive: true, maxSockets, ca, servername: 'localhost' });
}

const socketIds = new WeakMap<object, number>();
let nextSocketId = 1;

export interface PostOptions {
  readonly agent: Agent;
  readonly port: number;
  readonly path?: string;
  readonly body: string | Buffer;
  readonly headers?: Record<string, string>;
  readonly timeoutMs?: number;
  /** Send the body in pieces, `chunkBytes` every `chunkEveryMs`. */
  readonly slowBody?: { chunkBytes: number; chunkEveryMs: number };
}

export function post(opts: PostOptions): Promise<Reply> {
  return new Promise((done, fail) => {
    const body = typeof opts.body === 'string' ? Buffer.from(opts.body) : opts.body;
    const req = request(
      {
        host: '127.0.0.1',
        port: opts.port,
        method: 'POST',
        path: opts.path ?? '/validate?timeout=10s',
        agent: opts.agent,
        headers: {
          'content-type': 'application/json',
          'content-length': String(body.length),
          ...opts.headers,
        },
        timeout: opts.timeoutMs ?? 15_000,
      },
      (res) => {
        const socket = res.socket;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let id = socketIds.get(socket);
          if (id === undefined) socketIds.set(socket, (id = nextSocketId++));
          done({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            socketId: id,
          });
        });
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', fail);
    if (!opts.slowBody) {
      req.end(body);
      return;
    }
    const { chunkBytes, chunkEveryMs } = opts.slowBody;
    let offset = 0;
    const tick = () => {
      if (req.destroyed) return;
      const end = Math.min(offset + chunkBytes, body.length);
      const piece = body.subarray(offset, end);
      offset = end;
      if (offset >= body.length) req.end(piece);
      else {
        req.write(piece);
        setTimeout(tick, chunkEveryMs);
      }
    };
    tick();
  });
}

/** SHA-256 fingerprint (hex, no colons) of the certificate a fresh TLS connection is served. */
export function peerFingerprint(port: number, ca: (string | Buffer)[], timeoutMs = 3_000): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect(
      { host: '127.0.0.1', port, ca, servername: 'localhost', timeout: timeoutMs },
      () => {
        const cert = socket.getPeerCertificate();
        socket.destroy();
        done(createHash('sha256').update(cert.raw).digest('hex'));
      },
    );
    socket.on('timeout', () => socket.destroy(new Error('TLS timeout')));
    socket.on('error', fail);
  });
}

/** Fingerprint of a PEM certificate, comparable with peerFingerprint. */
export function pemFingerprint(pem: string): string {
  const b64 = pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  return createHash('sha256').update(Buffer.from(b64, 'base64')).digest('hex');
}

export interface RawReply {
  /** The first status line's code, 0 when the connection ended without one. */
  readonly status: number;
  readonly text: string;
  /** How the connection ended. */
  readonly ended: 'closed' | 'reset' | 'timeout' | 'open';
  readonly elapsedMs: number;
}

/**
 * Writes raw bytes (request line, headers, body, in the given pieces) over TLS
 * and reads whatever comes back until the server closes or `timeoutMs`.
 */
export function rawExchange(
  port: number,
  ca: string | Buffer | (string | Buffer)[],
  pieces: readonly (Buffer | string | { pauseMs: number })[],
  timeoutMs = 5_000,
  stopAfterResponse = true,
): Promise<RawReply> {
  return new Promise((done) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    let settled = false;
    const send = async (): Promise<void> => {
      for (const piece of pieces) {
        if (settled || socket.destroyed) return;
        if (typeof piece === 'object' && 'pauseMs' in piece) await sleep(piece.pauseMs);
        else
          await new Promise<void>((r) => {
            if (socket.destroyed) return r();
            socket.write(piece, () => r());
          });
      }
    };
    // The pieces go out in the background; the answer (or a timeout) settles the promise.
    const socket: TLSSocket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      void send();
    });
    const finish = (ended: RawReply['ended']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      // Interim answers (100 Continue) precede the real one.
      const text = Buffer.concat(chunks)
        .toString('utf8')
        .replace(/^(HTTP\/1\.[01] 1\d\d[^\r]*\r\n(?:[^\r]+\r\n)*\r\n)+/, '');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      done({ status: m ? Number(m[1]) : 0, text, ended, elapsedMs: performance.now() - started });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (stopAfterResponse && responseComplete(Buffer.concat(chunks))) finish('open');
    });
    socket.on('end', () => finish('closed'));
    socket.on('close', () => finish('closed'));
    socket.on('error', (err: NodeJS.ErrnoException) =>
      finish(err.code === 'ECONNRESET' ? 'reset' : 'closed'),
    );
  });
}

/** True once a full HTTP/1.1 response with a Content-Length body is buffered. */
function responseComplete(whole: Buffer): boolean {
  let buf = whole;
  while (/^HTTP\/1\.[01] 1\d\d/.test(buf.subarray(0, 12).toString('latin1'))) {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return false;
    buf = buf.subarray(end + 4);
  }
  const head = buf.indexOf('\r\n\r\n');
  if (head < 0) return false;
  const headers = buf.subarray(0, head).toString('latin1');
  const m = /\r\ncontent-length:\s*(\d+)/i.exec(headers);
  if (!m) return false;
  return buf.length >= head + 4 + Number(m[1]);
}

/** Builds a raw HTTP/1.1 POST. */
export function rawPost(
  body: Buffer | string,
  opts: { path?: string; headers?: Record<string, string>; contentLength?: number | null } = {},
): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const headers: Record<string, string> = {
    host: 'localhost',
    'content-type': 'application/json',
    ...opts.headers,
  };
  if (opts.contentLength !== null) headers['content-length'] = String(opts.contentLength ?? bytes.length);
  const head =
    `POST ${opts.path ?? '/validate?timeout=10s'} HTTP/1.1\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    '\r\n';
  return Buffer.concat([Buffer.from(head, 'latin1'), bytes]);
}

/** Is this a well-formed AdmissionReview answer for `uid`? Returns a reason when not. */
export function reviewProblem(
  body: string,
  uid: string,
  apiVersion = 'admission.k8s.io/v1',
): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return 'response is not JSON';
  }
  const review = parsed as {
    apiVersion?: unknown;
    kind?: unknown;
    response?: { uid?: unknown; allowed?: unknown; patch?: unknown; patchType?: unknown; status?: unknown };
  };
  if (review.apiVersion !== apiVersion) return `apiVersion ${String(review.apiVersion)}`;
  if (review.kind !== 'AdmissionReview') return `kind ${String(review.kind)}`;
  const r = review.response;
  if (!r || typeof r !== 'object') return 'no response';
  if (r.uid !== uid) return `uid ${JSON.stringify(r.uid)} != ${JSON.stringify(uid)}`;
  if (typeof r.allowed !== 'boolean') return 'allowed is not a boolean';
  if ((r.patch === undefined) !== (r.patchType === undefined))
    return 'patch without patchType or the reverse';
  if (r.patch !== undefined) {
    if (r.patchType !== 'JSONPatch') return 'patchType is not JSONPatch';
    try {
      if (!Array.isArray(JSON.parse(Buffer.from(String(r.patch), 'base64').toString('utf8'))))
        return 'patch not an array';
    } catch {
      return 'patch is not base64 JSON';
    }
  }
  if (r.allowed === false) {
    const status = r.status as { code?: unknown; message?: unknown } | undefined;
    if (!status || typeof status.message !== 'string' || typeof status.code !== 'number')
      return 'denial without status';
  }
  return undefined;
}
