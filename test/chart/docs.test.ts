// The chart README documents every value, the schema knows every value, and NOTES.txt tells the
// user how to check the install and how to recover.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { chartDir } from './helm.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Leaf paths of values.yaml; an empty map or list counts as a leaf. */
function leafPaths(node: Json, prefix = ''): string[] {
  if (node !== null && typeof node === 'object' && !Array.isArray(node) && Object.keys(node).length > 0) {
    return Object.entries(node).flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k));
  }
  return [prefix];
}

const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as Json;
const readme = readFileSync(join(chartDir, 'README.md'), 'utf8');
const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8'));

describe('chart README', () => {
  const valuesSection = readme.slice(
    readme.indexOf('\n## Values'),
    readme.indexOf('\n## ', readme.indexOf('\n## Values') + 1),
  );
  const documented = new Set([...valuesSection.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]));

  it('has a table row for every value (or for the block that holds it)', () => {
    const missing = leafPaths(values).filter((path) => {
      const parts = path.split('.');
      return !parts.some((_, i) => documented.has(parts.slice(0, i + 1).join('.')));
    });
    expect(missing).toEqual([]);
  });

  it('documents no value that does not exist', () => {
    const paths = leafPaths(values);
    const stale = [...documented].filter((key) => !paths.some((p) => p === key || p.startsWith(`${key}.`)));
    expect(stale).toEqual([]);
  });

  it('states the kubeVersion floor and why', () => {
    expect(readme).toContain('>=1.30.0-0');
    expect(readme).toMatch(/matchConditions.*GA in 1\.30/);
    expect(readme).toMatch(/1\.33/);
  });
});

describe('values.schema.json', () => {
  it('describes every value in values.yaml', () => {
    const missing = leafPaths(values).filter((path) => {
      let node = schema;
      for (const part of path.split('.')) {
        if (node?.properties?.[part] === undefined) return node?.additionalProperties === false;
        node = node.properties[part];
      }
      return false;
    });
    expect(missing).toEqual([]);
  });

  it('closes every object it describes (unknown keys are errors)', () => {
    const open: string[] = [];
    const walk = (
      node: { properties?: Record<string, unknown>; additionalProperties?: unknown },
      path: string,
    ) => {
      if (!node.properties) return;
      if (node.additionalProperties !== false) open.push(path || '(root)');
      for (const [k, v] of Object.entries(node.properties)) walk(v as typeof node, path ? `${path}.${k}` : k);
    };
    walk(schema, '');
    expect(open).toEqual([]);
  });
});

describe('NOTES.txt', () => {
  const notes = readFileSync(join(chartDir, 'templates', 'NOTES.txt'), 'utf8');

  it('tells how to check the install', () => {
    expect(notes).toMatch(/kubectl -n \{\{ \$ns \}\} rollout status deployment\/\{\{ \$fullname \}\}/);
    expect(notes).toContain('/readyz');
    expect(notes).toContain('kubectl apply --dry-run=server');
  });

  it('tells how to recover when the webhook is down: delete both configurations', () => {
    expect(notes).toMatch(
      /kubectl delete validatingwebhookconfiguration \{\{ include "grw\.validatingConfigurationName" \. \}\}/,
    );
    expect(notes).toMatch(
      /kubectl delete mutatingwebhookconfiguration \{\{ include "grw\.mutatingConfigurationName" \. \}\}/,
    );
    expect(notes).toContain('failed calling webhook');
  });
});
