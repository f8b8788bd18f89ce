/**
 * The commit-msg hook (.githooks/commit-msg, installed with the pre-commit one): a subject over 72
 * characters is refused with a line that says to put the rest in the body. Run on message files,
 * as git runs it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const HOOK = join(import.meta.dirname, '..', '..', '.githooks', 'commit-msg');
const dir = mkdtempSync(join(tmpdir(), 'commit-msg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runHook(message: string) {
  const file = join(dir, 'COMMIT_EDITMSG');
  writeFileSync(file, message);
  const run = spawnSync('sh', [HOOK, file], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

const base = 'fix(kube): a subject';

describe('commit-msg hook', () => {
  it.each([
    { name: 'a short subject with a body', message: `${base}\n\nThe why, as long as it needs to be.\n` },
    { name: 'exactly 72 characters', message: `${'x'.repeat(72)}\n` },
    { name: '72 characters that are not ASCII', message: `${'±'.repeat(72)}\n` },
    { name: 'a long body line', message: `${base}\n\n${'y'.repeat(200)}\n` },
    { name: 'a long comment before the subject', message: `# ${'z'.repeat(100)}\n\n${base}\n` },
    { name: 'trailing spaces past 72', message: `${'x'.repeat(72)}   \n` },
    { name: "git's merge subject", message: `Merge branch '${'b'.repeat(80)}'\n` },
    { name: 'a fixup! of a 72-character subject', message: `fixup! ${'x'.repeat(72)}\n` },
  ])('lets through $name', ({ message }) => {
    expect(runHook(message)).toEqual({ status: 0, stderr: '' });
  });

  it.each([
    { name: '73 characters', message: `${'x'.repeat(73)}\n`, length: 73 },
    { name: 'a long subject with a body', message: `${'s'.repeat(120)}\n\nbody\n`, length: 120 },
    { name: 'a long subject after comments', message: `# note\n\n${'s'.repeat(90)}\n`, length: 90 },
    { name: 'a long subject with no newline', message: 'w'.repeat(100), length: 100 },
  ])('refuses $name and says to put the rest in the body', ({ message, length }) => {
    const { status, stderr } = runHook(message);
    expect(status).toBe(1);
    expect(stderr).toContain(`the subject is ${length} characters; at most 72`);
    expect(stderr).toContain('put the rest in the body');
  });
});
