/** Every Gateway in the upstream examples and conformance files is valid: the webhook must allow them all. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { validateGateway } from '../../src/rules/index.js';
import { context, create, ranges } from '../kit/gateways.js';
import { GATEWAY_API_EXAMPLES as root } from '../kit/upstream-fixtures.js';

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}

describe('upstream Gateway API v1.6.1 examples (test/fixtures/upstream)', () => {
  const gateways = yamlFiles(root).flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as { kind?: string; apiVersion?: string; metadata?: { name?: string } } | null)
      .filter((o) => o?.kind === 'Gateway' && String(o.apiVersion).startsWith('gateway.networking.k8s.io/'))
      .map((o) => ({ file: file.slice(root.length + 1), object: o! })),
  );

  it('finds the corpus', () => expect(gateways.length).toBeGreaterThan(90));

  it('allows every Gateway as a CREATE, with no warnings', () => {
    const ctx = context({ ranges: ranges('10.96.0.0/12', 'fd00:10:96::/112') });
    const refused = gateways
      .map(({ file, object }) => ({
        file,
        name: object.metadata?.name,
        result: validateGateway(create(object), ctx),
      }))
      .filter((g) => !g.result.allowed || g.result.warnings.length > 0)
      .map((g) => `${g.file} ${g.name}: ${g.result.message || g.result.warnings.join('; ')}`);
    expect(refused).toEqual([]);
  });
});
