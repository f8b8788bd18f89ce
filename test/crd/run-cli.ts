/** Runs a command in-process with in-memory streams. */
import { PassThrough, Readable } from 'node:stream';
import type { CommandIO } from '../../src/io.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(
  command: (argv: readonly string[], io: CommandIO) => Promise<number>,
  argv: readonly string[],
  opts: { stdin?: string; env?: Record<string, string | undefined>; cwd?: string } = {},
): Promise<CliResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (c: Buffer) => out.push(c));
  stderr.on('data', (c: Buffer) => err.push(c));
  const code = await command(argv, {
    stdin: Readable.from([Buffer.from(opts.stdin ?? '')]),
    stdout,
    stderr,
    env: opts.env ?? {},
    cwd: opts.cwd ?? process.cwd(),
  });
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}
