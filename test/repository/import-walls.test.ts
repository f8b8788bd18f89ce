/**
 * The import walls of eslint.config.js (`house/import-walls`) refuse what they
 * should: `npm run lint` passing says nothing if the rule itself lets an import
 * through. Each row lints one line of code as if it stood in a file of src/,
 * with the repository's own rule and WALLS, without type information (the
 * rule needs none).
 */
import { Linter } from 'eslint';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(import.meta.dirname, '..', '..');
const SRC = path.join(ROOT, 'src');
// The configuration is plain JavaScript without type declarations: imported by path, typed here.
const config = (
  (await import(pathToFileURL(path.join(ROOT, 'eslint.config.js')).href)) as { default: Linter.Config[] }
).default;

type Plugin = NonNullable<Linter.Config['plugins']>[string];
const house = config.find((c) => c.plugins?.['house'])?.plugins?.['house'] as Plugin;

/** The rule's messages for `code` in `file` (relative to src/, or `../x` for a file outside it). */
function wallMessages(file: string, code: string): string[] {
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify(
    code,
    [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser as Linter.Parser, sourceType: 'module' },
        plugins: { house },
        rules: { 'house/import-walls': 'error' },
      },
    ],
    { filename: path.join(SRC, file) },
  );
  // The wall message ends by naming where the walls are; the rows name only what is refused.
  return messages.map((m) => m.message.replace(/ \(eslint\.config\.js WALLS\)\.$/, ''));
}

describe('the import walls (eslint.config.js WALLS, house/import-walls)', () => {
  it('are the rule the lint configuration installs for src/', () => {
    expect(house).toBeDefined();
    expect(wallMessages('rules/x.ts', "import { x } from '../json/record.js';")).toEqual([]);
  });

  it.each([
    [
      'rules/x.ts',
      "import { auditPass } from '../audit/pass.js';",
      'rules may not import audit (../audit/pass.js)',
    ],
    ['rules/x.ts', "import { readFileSync } from 'fs';", 'rules may not import fs'],
    ['rules/x.ts', "import { readFileSync } from 'node:fs';", 'rules may not import node:fs'],
    ['rules/x.ts', "export * from '../http/app.js';", 'rules may not import http (../http/app.js)'],
    [
      'rules/x.ts',
      "export { x } from '../inputs/ranges/types.js';",
      'rules may not import inputs (../inputs/ranges/types.js)',
    ],
    [
      'rules/x.ts',
      "type T = import('../audit/pass.js').AuditResult;",
      'rules may not import audit (../audit/pass.js)',
    ],
    [
      'http/x.ts',
      "import type { KubeClient } from '../kube/client.js';",
      'http may not import kube (../kube/client.js)',
    ],
    [
      'http/x.ts',
      "export const load = () => import('../kube/kubeconfig.js');",
      'http may not import kube (../kube/kubeconfig.js)',
    ],
    [
      'http/x.ts',
      'export const load = (m: string) => import(m);',
      'http may not import a computed module name',
    ],
    [
      'http/x.ts',
      "import { parseIP } from '../rules/ip.js';",
      'The rule engine is entered through rules/index.ts, not ../rules/ip.js.',
    ],
    [
      'json/x.ts',
      "import { finding } from '../rules/index.js';",
      'json may not import rules (../rules/index.js)',
    ],
    ['io.ts', "import { x } from './rules/index.js';", 'io.ts may not import rules (./rules/index.js)'],
    [
      'newpart/x.ts',
      "import { x } from '../json/record.js';",
      'newpart may not import json (../json/record.js)',
    ],
  ])('%s: refuses %s', (file, code, message) => {
    expect(wallMessages(file, code)).toEqual([message]);
  });

  it.each([
    ['rules/x.ts', "import ipaddr from 'ipaddr.js';"],
    ['rules/x.ts', "import { FieldPath } from './field-path.js';"],
    ['http/x.ts', "import { validateReview } from '../rules/index.js';"],
    ['http/x.ts', "import type { FastifyInstance } from 'fastify';"],
    ['server/x.ts', "export const load = () => import('../audit/server.js');"],
    ['../test/x.ts', "import { readFileSync } from 'node:fs';"],
  ])('%s: allows %s', (file, code) => {
    expect(wallMessages(file, code)).toEqual([]);
  });
});
