/**
 * Tests are shaped like src/: every folder of src/ has its test/<folder>/ (the tests of its code
 * sit there), no test file lies loose at test/'s top unless it tests a file at src/'s top
 * (test/error-text.test.ts for src/error-text.ts), and every other folder of test/ is one of
 * the few listed below, each for a reason that is not a part of src/. The list of src/ folders is
 * read from src/ itself, so folders that come and go (a part dissolved, a part added) keep this true.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** Folders of test/ that mirror no folder of src/, and why each exists. */
const NOT_MIRRORS: Readonly<Record<string, string>> = {
  kit: 'helpers shared by the tests and the benchmarks (fake API server, server harness, payloads)',
  fixtures: 'data the tests read: reviews, manifests, upstream examples, chart values history',
  docs: 'the documentation: every command, link, flag table and figure it shows',
  chart: 'the Helm chart under charts/, rendered with the real helm',
  docker: 'the Dockerfile and the container image plan',
  repository: 'the repository itself: import graph, walls, layout, pinning, release files',
  'failure-stories': 'end-to-end stories of an outage across the webhook, the API server and the chart',
  reliability: 'the built server under faults, hostile clients and fuzzing, as a process',
};

interface Layout {
  /** Folders of src/. */
  src: readonly string[];
  /** Folders of test/. */
  testFolders: readonly string[];
  /** Files at test/'s top. */
  testFiles: readonly string[];
  /** Files at src/'s top (error-text.ts, io.ts ...): their tests mirror them at test/'s top. */
  srcFiles: readonly string[];
}

function layoutProblems(layout: Layout): string[] {
  const problems: string[] = [];
  for (const folder of layout.src)
    if (!layout.testFolders.includes(folder)) problems.push(`src/${folder}/ has no test/${folder}/`);
  for (const folder of layout.testFolders)
    if (!layout.src.includes(folder) && !(folder in NOT_MIRRORS))
      problems.push(`test/${folder}/ mirrors no folder of src/ and is not listed in NOT_MIRRORS`);
  for (const folder of Object.keys(NOT_MIRRORS))
    if (layout.src.includes(folder))
      problems.push(`test/${folder}/ is listed in NOT_MIRRORS but src/${folder}/ exists`);
  for (const file of layout.testFiles)
    if (/\.test\.[cm]?[jt]s$/.test(file) && !layout.srcFiles.includes(file.replace(/\.test\./, '.')))
      problems.push(`test/${file} lies loose: move it to the folder of what it tests`);
  return problems;
}

function folders(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
}

const repository = (): Layout => ({
  src: folders('src'),
  testFolders: folders('test'),
  testFiles: readdirSync(join(ROOT, 'test'), { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name),
  srcFiles: readdirSync(join(ROOT, 'src'), { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name),
});

describe('test/ mirrors src/', () => {
  it('holds for the repository', () => {
    const layout = repository();
    expect(layout.src).toContain('rules');
    expect(layoutProblems(layout)).toEqual([]);
  });

  const base: Layout = {
    src: ['rules', 'http'],
    testFolders: ['rules', 'http', 'kit'],
    testFiles: [],
    srcFiles: ['io.ts'],
  };
  it.each<[string, Partial<Layout>, string]>([
    [
      'a src folder without tests',
      { src: ['rules', 'http', 'webhooks'] },
      'src/webhooks/ has no test/webhooks/',
    ],
    [
      'a test folder that mirrors nothing',
      { testFolders: ['rules', 'http', 'kit', 'cluster'] },
      'test/cluster/ mirrors no folder of src/ and is not listed in NOT_MIRRORS',
    ],
    [
      'a loose test file',
      { testFiles: ['config.test.ts'] },
      'test/config.test.ts lies loose: move it to the folder of what it tests',
    ],
    [
      'a listed extra that became a src folder',
      { src: ['rules', 'http', 'kit'] },
      'test/kit/ is listed in NOT_MIRRORS but src/kit/ exists',
    ],
  ])('refuses %s', (_name, change, problem) => {
    expect(layoutProblems({ ...base, ...change })).toEqual([problem]);
  });

  it('accepts a mirror with listed extras and non-test files at the top', () => {
    expect(
      layoutProblems({ ...base, testFolders: [...base.testFolders, 'docs'], testFiles: ['README.md'] }),
    ).toEqual([]);
  });

  it("accepts a test at test/'s top of a file at src/'s top", () => {
    expect(layoutProblems({ ...base, testFiles: ['io.test.ts'] })).toEqual([]);
  });
});
