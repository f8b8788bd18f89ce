/** In-process runs of `check` with fake streams, and golden files. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { expect } from 'vitest';
import { runCheck } from '../../src/cli/check.js';
import type { CommandIO } from '../../src/io.js';

export const REPO = join(import.meta.dirname, '..', '..');
export const FIXTURES = join(REPO, 'test', 'fixtures', 'check');
export const MANIFESTS = join(FIXTURES, 'manifests');
export const GOLDEN = join(FIXTURES, 'golden');
/** The service ranges the fixtures are written against: dual-stack, kubeadm-like. */
export const RANGES = ['--service-cidr', '10.96.0.0/12,fd00:10:96::/112'];

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function sink(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

export async function check(
  argv: readonly string[],
  options: { cwd?: string; stdin?: string; env?: Record<string, string> } = {},
): Promise<RunResult> {
  const stdout = sink();
  const stderr = sink();
  const io: CommandIO = {
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: options.env ?? {},
    cwd: options.cwd ?? FIXTURES,
  };
  const code = await runCheck(argv, io);
  await new Promise((r) => setImmediate(r));
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** Compares with a golden file; `npm run goldens:update` rewrites it instead (review the diff by eye). */
export function expectGolden(name: string, actual: string): void {
  const file = join(GOLDEN, name);
  if (process.env['UPDATE_GOLDEN'] === '1') {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  if (!existsSync(file))
    throw new Error(`golden ${file} is missing: write it with npm run goldens:update and review it`);
  expect(actual).toBe(readFileSync(file, 'utf8'));
}
