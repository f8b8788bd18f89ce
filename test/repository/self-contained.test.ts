/**
 * A clone has nothing beside it: no file of the repository may read from a
 * folder next to the clone (the reference material the project was built
 * with lived in a sibling folder; what the tests need of it is in
 * test/fixtures/upstream). Every text file is read: sources, tests, benchmarks,
 * scripts, CI, workflows, the Stryker and vitest configs, docs, the chart.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');
/** Built, installed or cached: not the repository's own files. */
const NOT_OURS = new Set(['node_modules', 'dist', '.cache', '.git', 'coverage']);

/**
 * The sibling folder's name, assembled so that this file holds none of the
 * spellings it looks for and needs no exemption from its own check.
 */
const SIBLING = ['sha', 'red'].join('');
/** A path leading out of the clone into the sibling folder, in the ways code and docs spell one. */
const OUTSIDE = [
  new RegExp(`\\.\\.[/\\\\]+${SIBLING}\\b`), // ../X, ..\X, '../../../X/fixtures/'
  new RegExp(`['"]\\.\\.['"]\\s*,\\s*(?:['"]\\.\\.['"]\\s*,\\s*)*['"]${SIBLING}['"]`), // join(…, '..', 'X')
  new RegExp(`/work/${SIBLING}\\b`), // the absolute path of this workplace
  new RegExp(`\\b${SIBLING.toUpperCase()}_FIXTURES_DIR\\b`), // the variable that used to point there
];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (NOT_OURS.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return entry.isFile() ? [path] : [];
  });
}

/** Text files only: a NUL byte in the first 8 KiB marks a binary. */
function text(path: string): string | undefined {
  if (statSync(path).size > 8 * 1024 * 1024) return undefined;
  const content = readFileSync(path);
  return content.subarray(0, 8192).includes(0) ? undefined : content.toString('utf8');
}

/** `file:line: text` for each line of `content` that leads outside. */
function outsideReferences(file: string, content: string): string[] {
  return content.split('\n').flatMap((line, i) => {
    return OUTSIDE.some((re) => re.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : [];
  });
}

describe('the repository stands alone', () => {
  const all = files(REPO).map((path) => relative(REPO, path));

  it('reads the folders the rule is about', () => {
    for (const place of ['src/', 'test/', 'bench/', 'scripts/', '.ci/', '.github/'])
      expect(
        all.some((f) => f.startsWith(place)),
        place,
      ).toBe(true);
    for (const config of ['stryker.config.mjs', 'vitest.config.ts', 'vitest.mutation.config.ts'])
      expect(all, config).toContain(config);
  });

  it('no file refers to the sibling folder or anything else beside the clone', () => {
    const found = all.flatMap((file) => {
      const content = text(join(REPO, file));
      return content === undefined ? [] : outsideReferences(file, content);
    });
    expect(found).toEqual([]);
  });

  it('finds a reference when there is one (each spelling)', () => {
    const planted = [
      `const DIR = join(import.meta.dirname, '..', '..', '..', '${SIBLING}', 'fixtures');`,
      `export const CRD_FIXTURES = join(REPO, '../${SIBLING}/fixtures/gateway-api-v1.6.1/crds');`,
      `process.env['${SIBLING.toUpperCase()}_FIXTURES_DIR'] ??= '/elsewhere';`,
      `cp -r /work/${SIBLING}/fixtures test/`,
    ];
    for (const line of planted) expect(outsideReferences('planted', line), line).toHaveLength(1);
    expect(
      outsideReferences('fine', `import { x } from '../kit/upstream-fixtures.js'; // ${SIBLING} helper`),
    ).toEqual([]);
  });
});
