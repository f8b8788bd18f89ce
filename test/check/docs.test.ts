/** docs/ci.md documents the JSON report: its schema example must name exactly the keys `--output json` prints. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JSON_SCHEMA_VERSION } from '../../src/check/format/json.js';
import { CHECK_FLAGS } from '../../src/check/options.js';
import { check, RANGES, REPO } from './support.js';

const CI_MD = readFileSync(join(REPO, 'docs', 'ci.md'), 'utf8');

/** Every key path in a JSON value, arrays collapsed to `[]`: `files[].gateways[].findings[].code`. */
function keyPaths(value: unknown, prefix = '', out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) keyPaths(item, `${prefix}[]`, out);
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const path = prefix ? `${prefix}.${k}` : k;
      out.add(path);
      keyPaths(v, path, out);
    }
  }
  return out;
}

describe('docs/ci.md', () => {
  it('its JSON schema example has exactly the keys of a real report', async () => {
    const block = /```jsonc\n([\s\S]*?)```/.exec(CI_MD)?.[1];
    expect(block, 'a ```jsonc block in docs/ci.md').toBeDefined();
    const documented = JSON.parse(block!.replace(/\s*\/\/.*$/gm, ''));
    expect(documented.version).toBe(JSON_SCHEMA_VERSION);
    // The fixture folder has every kind of entry: Gateways with findings, List items, input errors.
    const real = JSON.parse((await check(['-f', 'manifests', ...RANGES, '-o', 'json'])).stdout);
    expect([...keyPaths(documented)].sort()).toEqual([...keyPaths(real)].sort());
  });

  it('mentions every flag of check', () => {
    for (const name of Object.keys(CHECK_FLAGS))
      if (name !== 'help' && name !== 'filename') expect(CI_MD).toContain(`--${name}`);
  });
});
