/**
 * A raw HTTPS client that streams a request body and reads the answer until the
 * server closes the connection: what a client still sending sees, including a
 * reset after the answer (which a client that stops at the first response would
 * never notice).
 */
import { connect } from 'node:tls';

export interface UploadResult {
  /** Status of the first final response, 0 when none arrived. */
  readonly status: number;
  /** Everything received, as text. */
  readonly text: string;
  /** Body bytes the client wrote before it finished or the connection failed. */
  readonly bodyBytesWritten: number;
  /** True when every declared body byte was written. */
  readonly sentAll: boolean;
  /** How the connection ended: closed cleanly, reset (ECONNRESET/EPIPE), or still open at the deadline. */
  readonly ended: 'closed' | 'reset' | 'timeout';
  readonly errorCode: string | undefined;
}

export interface UploadOptions {
  readonly port: number;
  readonly ca: string | Buffer;
  readonly path?: string;
  /** The Content-Length header. */
  readonly declaredBytes: number;
  /** How many body bytes to send (default: declaredBytes); fewer leaves the body unfinished. */
  readonly sendBytes?: number;
  readonly chunkBytes?: number;
  /** Give up waiting for the server to close after this long. */
  readonly timeoutMs: number;
}

export function upload(opts: UploadOptions): Promise<UploadResult> {
  const sendBytes = opts.sendBytes ?? opts.declaredBytes;
  const chunk = Buffer.alloc(opts.chunkBytes ?? 64 * 1024, 0x20);
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    let written = 0;
    let errorCode: string | undefined;
    let settled = false;
    const socket = connect(
      { host: '127.0.0.1', port: opts.port, ca: opts.ca, servername: 'localhost' },
      () => void send(),
    );
    // Writes the head, then the body piece by piece, each after the last was flushed.
    async function send(): Promise<void> {
      socket.write(
        `POST ${opts.path ?? '/validate?timeout=10s'} HTTP/1.1\r\nhost: localhost\r\n` +
          `content-type: application/json\r\ncontent-length: ${opts.declaredBytes}\r\n\r\n`,
      );
      while (written < sendBytes && !socket.destroyed && !socket.writableEnded) {
        const piece = chunk.subarray(0, Math.min(chunk.length, sendBytes - written));
        const ok = await new Promise<boolean>((done) => {
          socket.write(piece, (err) => done(!err));
        });
        if (!ok) break;
        written += piece.length;
      }
    }
    const finish = (ended: UploadResult['ended']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(received).toString('utf8');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({
        status: m ? Number(m[1]) : 0,
        text,
        bodyBytesWritten: written,
        sentAll: written === opts.declaredBytes,
        ended,
        errorCode,
      });
    };
    const timer = setTimeout(() => finish('timeout'), opts.timeoutMs);
    socket.on('data', (c: Buffer) => received.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      errorCode = err.code;
      finish(err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'reset' : 'closed');
    });
    socket.on('close', () => finish('closed'));
  });
}
