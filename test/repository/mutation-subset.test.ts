/**
 * The mutation subset (vitest.mutation.config.ts) is kept by hand, and a
 * file missing from it is silent: Stryker reports its mutants as surviving,
 * not the test as absent (a rebase once dropped two test files of
 * test/cluster (now test/inputs), and a whole-folder run scored 96.51 instead of 97.05). Every
 * in-process test file of the mutated folders' tests must be in it; those that
 * start the built CLI in a child process cannot see a mutant and stay out.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import mutationConfig from '../../vitest.mutation.config.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const FOLDERS = [
  'test/rules',
  'test/admission',
  'test/http',
  'test/audit',
  'test/kube',
  'test/policy',
  'test/inputs',
  'test/server',
  // Audit flags tested here (the interval) are in the subset; serve's other flags are not.
  'test/config',
].filter((dir) => existsSync(path.join(ROOT, dir)));

/** In process, but left out on purpose. */
const LEFT_OUT: Record<string, string> = {
  'test/server/params-sync-serve.test.ts':
    'starts the built server; its in-process tests of the params sync are in test/server',
  'test/config/lease-flags.test.ts': "serve's audit lease flags: src/config is not mutated",
  'test/config/serve.test.ts': "serve's flags and their environment names: src/config is not mutated",
};

/** What starts the built CLI in a child process. */
const CHILD_PROCESS = /from '\.\.\/(kit\/server-process|crd\/run-cli)\.js'/;

const include = mutationConfig.test?.include ?? [];

function inSubset(file: string): boolean {
  return include.some((entry) =>
    entry.endsWith('/**/*.test.ts')
      ? file.startsWith(entry.slice(0, -'**/*.test.ts'.length))
      : entry === file,
  );
}

function testFiles(): string[] {
  return FOLDERS.flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => `${dir}/${f.split(path.sep).join('/')}`),
  ).sort();
}

describe('the mutation subset', () => {
  it('holds every in-process test file of the mutated folders', () => {
    const missing = testFiles().filter(
      (f) =>
        !inSubset(f) && !(f in LEFT_OUT) && !CHILD_PROCESS.test(readFileSync(path.join(ROOT, f), 'utf8')),
    );
    expect(missing).toEqual([]);
  });

  it('names only files that exist', () => {
    const files = new Set(testFiles());
    const named = include.filter((e) => e.startsWith('test/') && !e.includes('*'));
    expect(named.filter((f) => !files.has(f))).toEqual([]);
    expect(Object.keys(LEFT_OUT).filter((f) => !files.has(f))).toEqual([]);
  });
});
