/** docs/ci.md documents the JSON report: its schema example must name exactly the keys `--output json` prints. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { JSON_SCHEMA_VERSION } from '../../src/check/format.js';
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

/** The ```yaml blocks of docs/ci.md that contain `needle`, parsed. */
function yamlBlocks(needle: string): unknown[] {
  return [...CI_MD.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((block) => block.includes(needle))
    .map((block) => parse(block) as unknown);
}

describe('docs/ci.md: the examples are the tested entry points', () => {
  it('the Action example gives every required input and only inputs action.yml declares', () => {
    const action = parse(readFileSync(join(REPO, 'action.yml'), 'utf8')) as {
      inputs: Record<string, { required?: boolean }>;
    };
    const [workflow] = yamlBlocks('uses: gateway-routability-webhook/gateway-routability-webhook@') as {
      jobs: Record<string, { steps: { uses?: string; with?: Record<string, string> }[] }>;
    }[];
    const step = Object.values(workflow!.jobs)
      .flatMap((j) => j.steps)
      .find((s) => s.uses?.startsWith('gateway-routability-webhook/gateway-routability-webhook@'))!;
    const given = Object.keys(step.with ?? {});
    expect(given.filter((k) => !(k in action.inputs))).toEqual([]);
    const required = Object.entries(action.inputs)
      .filter(([, d]) => d.required)
      .map(([k]) => k);
    expect(required.filter((k) => !given.includes(k))).toEqual([]);
    // The inputs table lists each input.
    for (const name of Object.keys(action.inputs)) expect(CI_MD).toContain(`| \`${name}\` |`);
  });

  it('the pre-commit example names the hook .pre-commit-hooks.yaml offers, with the ranges as args', () => {
    const hooks = parse(readFileSync(join(REPO, '.pre-commit-hooks.yaml'), 'utf8')) as { id: string }[];
    const [config] = yamlBlocks('.pre-commit-config.yaml') as {
      repos: { repo: string; hooks: { id: string; args?: string[] }[] }[];
    }[];
    const hook = config!.repos[0]!.hooks[0]!;
    expect(hooks.map((h) => h.id)).toContain(hook.id);
    expect(hook.args?.[0]).toBe('--service-cidr');
  });
});

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
