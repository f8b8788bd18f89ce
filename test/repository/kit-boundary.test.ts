/**
 * test/ and bench/ share one kit, test/kit/, and import nothing else of each other: a benchmark
 * imports test/kit/ only (never a test's own helpers, which change with the tests), a test never
 * imports bench/, and the kit itself stands on src/ and packages alone. Imports are read the way
 * the compiler reads them (static, type-only, re-exports, dynamic `import()`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function codeFiles(folder: string): string[] {
  if (!existsSync(join(ROOT, folder))) return [];
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((e) => {
    const path = `${folder}/${e.name}`;
    if (e.isDirectory())
      return ['node_modules', 'results', 'fixtures'].includes(e.name) ? [] : codeFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Each file's relative imports, as repository paths (`test/kit/http.ts`). */
function importsOf(files: Readonly<Record<string, string>>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of Object.entries(files)) {
    const targets = ts
      .preProcessFile(text, true, true)
      .importedFiles.map((f) => f.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => posix.normalize(posix.join(dirname(file), name)).replace(/\.js$/, '.ts'));
    graph.set(file, targets);
  }
  return graph;
}

const under = (path: string, folder: string) => path.startsWith(`${folder}/`);

/** What breaks the boundary: one line per import, `file → target: why`. */
function boundaryViolations(
  files: Readonly<Record<string, string>>,
  pending: readonly string[] = [],
): string[] {
  const out: string[] = [];
  for (const [file, targets] of importsOf(files))
    for (const target of targets) {
      const why =
        under(file, 'bench') &&
        under(target, 'test') &&
        !under(target, 'test/kit') &&
        !pending.includes(target)
          ? 'bench/ imports test/kit/ only'
          : under(file, 'test') && under(target, 'bench')
            ? 'test/ never imports bench/'
            : under(file, 'test/kit') && !under(target, 'test/kit') && !under(target, 'src')
              ? 'test/kit/ imports only test/kit/ and src/'
              : undefined;
      if (why) out.push(`${file} → ${target}: ${why}`);
    }
  return out;
}

function repositoryFiles(): Record<string, string> {
  const paths = [...codeFiles('test'), ...codeFiles('bench')];
  return Object.fromEntries(paths.map((p) => [p.split(sep).join('/'), readFileSync(join(ROOT, p), 'utf8')]));
}

describe('test/ and bench/ share test/kit/ and nothing else', () => {
  it('holds for the repository', () => {
    const files = repositoryFiles();
    expect(Object.keys(files).filter((f) => under(f, 'bench')).length).toBeGreaterThan(10);
    expect(Object.keys(files).filter((f) => under(f, 'test/kit')).length).toBeGreaterThan(10);
    expect(boundaryViolations(files, [])).toEqual([]);
  });

  it.each([
    ['bench/x.ts', "import { gateway } from '../test/cluster/helpers.js';", 'bench/ imports test/kit/ only'],
    [
      'bench/lib/x.ts',
      "import type { Row } from '../../test/rules/rows/spec-rules.js';",
      'bench/ imports test/kit/ only',
    ],
    ['bench/x.ts', "const m = await import('../test/docs/markdown.js');", 'bench/ imports test/kit/ only'],
    ['test/http/x.test.ts', "import { post } from '../../bench/lib/load.js';", 'test/ never imports bench/'],
    ['test/x.test.ts', "export { renderChart } from '../bench/run.js';", 'test/ never imports bench/'],
    [
      'test/kit/x.ts',
      "import { FakeApiServer } from '../cluster/fake-apiserver.js';",
      'test/kit/ imports only test/kit/ and src/',
    ],
    [
      'test/kit/x.ts',
      "import { CONFIG } from '../../bench/lib/webhook-app.js';",
      'test/ never imports bench/',
    ],
  ])('refuses %s: %s', (file, code, why) => {
    expect(boundaryViolations({ [file]: code }).map((v) => v.replace(/^.* → .*: /, ''))).toEqual([why]);
  });

  it.each([
    ['bench/x.ts', "import { post } from '../test/kit/webhook-client.js';"],
    ['bench/lib/x.ts', "import type { BenchPayload } from '../../test/kit/payloads.js';"],
    ['bench/x.ts', "import { ruleInputs } from '../src/inputs/rule-inputs.js';"],
    ['test/http/x.test.ts', "import { eventually } from '../kit/eventually.js';"],
    ['test/kit/x.ts', "import { sleep } from './eventually.js';"],
    ['test/kit/admission-model/x.ts', "import { ipOf } from '../../../src/rules/index.js';"],
    ['test/http/x.test.ts', "import { helper } from '../audit/results.js';"],
  ])('lets %s through: %s', (file, code) => {
    expect(boundaryViolations({ [file]: code })).toEqual([]);
  });

  it('lets a pending move through only while it is listed', () => {
    const files = { 'bench/x.ts': "import { gateway } from '../test/cluster/fake-apiserver.js';" };
    expect(boundaryViolations(files, ['test/cluster/fake-apiserver.ts'])).toEqual([]);
    expect(boundaryViolations(files)).toHaveLength(1);
  });
});
