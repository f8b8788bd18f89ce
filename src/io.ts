/**
 * The process boundary every command runs against: its streams, environment
 * and working folder (passed in, so tests need no process mocks), and the exit
 * codes the commands share. Below cli/ and check/, so both can use it.
 */

/** The streams and environment a command runs with. */
export interface CommandIO {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/** Exit codes shared by every command. */
export const EXIT_OK = 0 as const;
export const EXIT_VIOLATIONS = 1 as const;
export const EXIT_USAGE = 2 as const;

export async function readAll(stream: NodeJS.ReadableStream, limit = 64 * 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    if (size > limit) throw new Error(`input is larger than ${limit} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

export function writeLine(stream: NodeJS.WritableStream, text: string): void {
  stream.write(text.endsWith('\n') ? text : `${text}\n`);
}

/**
 * Makes a closed reader (`routability-webhook policy | head`) end the output
 * quietly instead of with an unhandled `EPIPE` stack trace: once the pipe is
 * gone, later writes are dropped and the command finishes with its own exit
 * code, so `set -o pipefail` still sees a violation's 1. Any other write
 * error is said once on stderr and is exit 1. Installed once, for every
 * command, by the entry point.
 */
export function quietOnClosedPipe(
  stream: NodeJS.WritableStream,
  onOtherError: (err: NodeJS.ErrnoException) => void,
): void {
  let closed = false;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || (closed && err.code === 'ERR_STREAM_DESTROYED')) {
      closed = true;
      return;
    }
    onOtherError(err);
  });
}
