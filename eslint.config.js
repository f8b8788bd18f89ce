import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Patterns for imports of src/cli/ from anywhere else in src/. */
const CLI_IMPORTS = ['**/cli/*', '**/cli/**', '../cli', './cli'];

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
    // Nothing outside the command layer depends on it: commands sit on top of everything else.
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/rules/**', 'src/admission/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: CLI_IMPORTS, message: 'Only src/cli/ imports src/cli/.' }] },
      ],
    },
  },
  {
    // The admission protocol layer (decode, encode, answer) knows AdmissionReviews, not the rules:
    // webhooks/ is where the two meet.
    files: ['src/admission/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: CLI_IMPORTS, message: 'Only src/cli/ imports src/cli/.' },
            {
              group: ['**/rules/*', '**/rules/**', '../rules'],
              message: 'src/admission does not import src/rules.',
            },
          ],
        },
      ],
    },
  },
  {
    // The rule engine is pure: no I/O, no Node built-ins, no transport.
    files: ['src/rules/**/*.ts'],
    ignores: ['src/rules/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fastify', 'fastify/*', 'pino', '@kubernetes/*', 'prom-client', 'yaml'],
              message: 'src/rules is pure: only ipaddr.js may be imported.',
            },
            { group: CLI_IMPORTS, message: 'Only src/cli/ imports src/cli/.' },
            {
              group: [
                '**/admission/*',
                '**/http/*',
                '**/cluster/*',
                '**/check/*',
                '**/config/*',
                '**/server/*',
              ],
              message: 'src/rules is pure: it imports nothing else of src/.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
