/**
 * A reader that goes away early (`routability-webhook policy | head`) must end
 * the command quietly: no `EPIPE` stack trace on stderr, and the command's own
 * exit code (so `set -o pipefail` still sees check's 1). The pipes are real
 * shell pipes whose reader (`true`) exits before the CLI has started, so every
 * write meets a closed pipe.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../kit/server-process.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');

/** Runs `node CLI args < input | true` in bash; resolves the CLI's exit code and stderr. */
function intoClosedPipe(args: readonly string[], input = '/dev/null') {
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(' ');
  const script = `${quoted} < '${input}' | true; echo "exit=\${PIPESTATUS[0]}" >&2`;
  return new Promise<{ code: number | undefined; stderr: string }>((resolve, reject) => {
    execFile('bash', ['-c', script], { timeout: 20_000 }, (err, _stdout, stderr) => {
      if (err) return reject(err);
      const match = /exit=(\d+)\s*$/.exec(stderr);
      resolve({ code: match ? Number(match[1]) : undefined, stderr: stderr.replace(/exit=\d+\s*$/, '') });
    });
  });
}

describe('every command ends quietly on a closed stdout', () => {
  it.each([
    { name: 'policy', args: ['policy', '--gep-revision', 'provisional'], code: 0 },
    { name: 'crd-patch', args: ['crd-patch'], code: 0 },
    { name: 'the command list', args: ['--help'], code: 0 },
    { name: "audit's help", args: ['audit', '--help'], code: 0 },
    {
      name: 'check with violations (exit 1 kept)',
      args: [
        'check',
        '--service-cidr',
        '10.96.0.0/12',
        '-f',
        join(FIXTURES, 'check', 'manifests', 'gateways.yaml'),
      ],
      code: 1,
    },
  ])('$name', async ({ args, code }) => {
    const r = await intoClosedPipe(args);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(code);
  });

  it('review, reading its AdmissionReview from stdin', async () => {
    const r = await intoClosedPipe(
      ['review', '--service-cidr', '10.96.0.0/12'],
      join(FIXTURES, 'reviews', 'create-cluster-outside-range.json'),
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
