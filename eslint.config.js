import path from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Import walls as allow-lists: what each part of src/ may import. A folder (or a top-level file
 * of src/) may import its own files, the parts of src/ listed here, and the packages and Node
 * built-ins listed here: nothing else, type-only and dynamic imports included. A new edge is a
 * design change: add it here, check that no cycle appears (test/repository/import-cycles.test.ts)
 * and draw it in the README's layout picture (test/docs/layout.test.ts). Outside rules/, the
 * engine is imported through rules/index.ts only.
 */
const WALLS = {
  admission: { src: 'json', packages: 'ajv' },
  audit: {
    src: 'config findings inputs json kube rules error-text.ts metric-registry.ts',
    packages: 'node:fs node:os pino prom-client',
  },
  certs: { src: 'error-text.ts', packages: 'node:crypto node:fs/promises node:path selfsigned' },
  check: { src: 'config findings inputs rules io.ts error-text.ts', packages: 'node:fs node:path yaml' },
  cli: {
    src: 'admission audit certs check config crd findings kube policy rules server verify webhooks error-text.ts io.ts',
    packages: 'node:fs node:fs/promises node:path node:url pino yaml',
  },
  config: { src: 'rules error-text.ts', packages: 'node:util' },
  crd: { src: 'json rules error-text.ts', packages: '' },
  // The judged finding, its line model and the writers check and audit share (text, json, github, junit, SARIF).
  findings: { src: 'rules', packages: 'node:crypto node:fs' },
  http: {
    src: 'admission inputs rules webhooks error-text.ts metric-registry.ts readiness.ts',
    packages:
      'fastify pino prom-client node:crypto node:fs node:fs/promises node:http node:https node:net node:path node:stream node:tls',
  },
  // What the rules read from the cluster or the flags: ranges/, allocations/, revision/, and the front.
  inputs: {
    src: 'config crd json kube rules metric-registry.ts readiness.ts',
    packages: '@kubernetes/client-node pino prom-client',
  },
  json: { src: '', packages: '' },
  kube: {
    src: 'json error-text.ts',
    packages:
      '@kubernetes/client-node pino prom-client node:fs node:http node:https node:os node:path node:stream node:child_process node:net yaml',
  },
  policy: { src: 'rules', packages: '' },
  // The engine is pure: no I/O, no Node built-ins, no transport; entered through rules/index.ts.
  rules: { src: 'json', packages: 'ipaddr.js' },
  server: {
    src: 'audit certs config http inputs kube policy metric-registry.ts readiness.ts',
    packages: 'pino prom-client node:fs node:https node:net node:path node:tls',
  },
  // verify: proves admission on a live cluster with dry runs; expected texts from the rule catalogue.
  verify: { src: 'crd json kube rules', packages: '' },
  // The AdmissionReview protocol (admission/) and the rules meet here.
  webhooks: { src: 'admission rules', packages: '' },
  'error-text.ts': { src: '', packages: '' },
  'io.ts': { src: '', packages: '' },
  'metric-registry.ts': { src: '', packages: 'prom-client' },
  'readiness.ts': { src: '', packages: '' },
};

const SRC = path.join(import.meta.dirname, 'src');

/** The part of src/ a file belongs to: its top folder, or its own name for a top-level file. */
function partOf(file) {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts.length > 1 ? parts[0] : parts[0].replace(/\.js$/, '.ts');
}

/** `house/import-walls`: every import of a file in src/ is one its part's wall allows. */
const importWalls = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      wall: '{{part}} may not import {{what}} (eslint.config.js WALLS).',
      entry: 'The rule engine is entered through rules/index.ts, not {{spec}}.',
    },
  },
  create(context) {
    const file = context.filename;
    if (path.relative(SRC, file).startsWith('..')) return {};
    const part = partOf(file);
    const wall = WALLS[part] ?? { src: '', packages: '' };
    const allowed = new Set(`${wall.src} ${wall.packages}`.split(' ').filter(Boolean));
    const check = (node, spec) => {
      if (typeof spec !== 'string') {
        context.report({ node, messageId: 'wall', data: { part, what: 'a computed module name' } });
        return;
      }
      const resolved = spec.startsWith('.') ? path.resolve(path.dirname(file), spec) : undefined;
      const target = resolved ? partOf(resolved) : spec;
      if (target !== part && !allowed.has(target))
        context.report({
          node,
          messageId: 'wall',
          data: { part, what: resolved ? `${target} (${spec})` : spec },
        });
      else if (target === 'rules' && part !== 'rules' && resolved !== path.join(SRC, 'rules', 'index.js'))
        context.report({ node, messageId: 'entry', data: { spec } });
    };
    const source = (node) => {
      if (node.source) check(node.source, node.source.value);
    };
    return {
      ImportDeclaration: source,
      ExportNamedDeclaration: source,
      ExportAllDeclaration: source,
      ImportExpression: (node) => check(node, node.source.type === 'Literal' ? node.source.value : undefined),
      TSImportType: (node) => check(node, node.argument?.literal?.value ?? node.source?.value),
      TSExternalModuleReference: (node) => check(node, node.expression.value),
    };
  },
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'charts/', 'certs/', '.cache/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      // Type information for the rules below, from the tsconfig.json that covers each file.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // A promise nobody awaits loses its rejection; one passed where a plain callback is
      // expected (an event handler, a Fastify hook) is never awaited by the caller.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // Budgets: a function that outgrows them is split by what it does.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
      complexity: ['error', 15],
      'max-params': ['error', 4],
    },
  },
  {
    // Import walls: what each part of src/ may import (WALLS above).
    files: ['src/**/*.ts'],
    plugins: { house: { rules: { 'import-walls': importWalls } } },
    rules: { 'house/import-walls': 'error' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
