/** docs/messages.md and the catalogue stay in sync: every code documented with its exact example text. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, RULE_CODES } from '../../src/rules/index.js';
import { WARNING_MAX } from '../../src/rules/messages.js';

const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'messages.md'), 'utf8');

describe('docs/messages.md', () => {
  it.each(RULE_CODES)('documents %s with its example message, warning and a fix', (code) => {
    const entry = CATALOGUE[code];
    const section = doc.split(`\n## ${code}\n`)[1]?.split('\n## ')[0];
    expect(section, `no "## ${code}" section`).toBeDefined();
    const params = entry.example.params as never;
    expect(section).toContain(`\n${entry.message(entry.example.field, params)}\n`);
    expect(section).toContain(`\n${entry.warning(entry.example.field, params)}\n`);
    expect(section).toMatch(/\*\*How to fix:\*\* \S/);
  });

  it('lists no code the catalogue lacks', () => {
    const documented = [...doc.matchAll(/^## ([A-Z][A-Za-z]+)$/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual([...RULE_CODES].sort());
  });
});

describe('catalogue', () => {
  it.each(RULE_CODES)('%s: message in field-error style, example warning within %d characters', (code) => {
    const entry = CATALOGUE[code];
    const params = entry.example.params as never;
    const message = entry.message(entry.example.field, params);
    expect(message.startsWith(`${entry.example.field}: `)).toBe(true);
    expect(message).not.toMatch(/denied the request/);
    expect(entry.warning(entry.example.field, params).length).toBeLessThanOrEqual(WARNING_MAX);
  });
});
