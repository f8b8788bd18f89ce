/**
 * No import cycle in src/, between files or between its parts (top folders and
 * top-level files); type-only and dynamic imports count, since a cycle of types
 * is still two modules that cannot be understood one without the other.
 */
import { describe, expect, it } from 'vitest';
import { cycles, fileImports, partImports } from '../kit/src-imports.js';

const partGraph = (graph: ReturnType<typeof fileImports>) =>
  new Map([...partImports(graph)].map(([part, to]) => [part, [...to.keys()]]));

describe('import cycles in src/', () => {
  it('none between files', () => {
    expect(cycles(fileImports())).toEqual([]);
  });

  it('none between folders', () => {
    expect(cycles(partGraph(fileImports()))).toEqual([]);
  });

  it('finds a planted one: a type-only import back, and a dynamic one across folders', () => {
    const planted = fileImports({
      'json/record.ts': "import type { Finding } from '../rules/index.js';\nexport type F = Finding;\n",
      'config/zz.ts': "export const load = () => import('../server/assemble.js');\n",
    });
    expect(cycles(planted).flat()).toContain('json/record.ts');
    const folders = cycles(partGraph(planted));
    expect(folders.flat()).toEqual(expect.arrayContaining(['json', 'rules', 'config', 'server']));
  });
});
