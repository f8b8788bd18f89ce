/**
 * README's layout section names every folder and top-level file of src/, and
 * nothing that is gone; its picture draws exactly the imports between folders.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileImports, partImports } from '../kit/src-imports.js';

const REPO = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const section = readme.split('\n## Layout\n')[1]?.split('\n## ')[0] ?? '';
/** The section's fenced blocks by language: `mermaid` for the picture, '' for the list. */
const blocks = new Map([...section.matchAll(/^```(\w*)\n([\s\S]*?)\n```$/gm)].map((m) => [m[1], m[2] ?? '']));
/** The first word of each line of the list: `src/cli/`, `src/io.ts`, `test/`, … */
const listed = (blocks.get('') ?? '')
  .split('\n')
  .map((line) => line.split(/\s+/)[0] ?? '')
  .filter((entry) => entry !== '');

describe('README layout', () => {
  it('has a layout block', () => {
    expect(listed.length).toBeGreaterThan(0);
  });

  it('lists every folder and top-level file of src/', () => {
    const entries = readdirSync(join(REPO, 'src'), { withFileTypes: true }).map((e) =>
      e.isDirectory() ? `src/${e.name}/` : `src/${e.name}`,
    );
    expect(listed.filter((e) => e.startsWith('src/')).sort()).toEqual(entries.sort());
  });

  it('lists only paths that exist', () => {
    for (const entry of listed) expect(existsSync(join(REPO, entry)), entry).toBe(true);
  });

  it('draws every src/ folder in the picture', () => {
    const picture = blocks.get('mermaid') ?? '';
    const drawn = new Set([...picture.matchAll(/(?:\[|\{\{)"([a-z]+)\/ /g)].map((m) => m[1]));
    const folders = readdirSync(join(REPO, 'src'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    for (const folder of folders) expect(drawn.has(folder), `${folder}/ not drawn`).toBe(true);
  });

  it('draws exactly the imports between src/ folders: an arrow for each, no other', () => {
    const picture = blocks.get('mermaid') ?? '';
    const drawn = new Set<string>();
    for (const line of picture.split('\n')) {
      const [from, to] = line.split('-->');
      if (to === undefined) continue;
      const ids = (side: string) => side.split('&').map((id) => id.trim());
      for (const a of ids(from!)) for (const b of ids(to)) drawn.add(`${a} --> ${b}`);
    }
    const imported = new Set<string>();
    for (const [from, to] of partImports(fileImports()))
      for (const part of to.keys())
        // Top-level files of src/ (io.ts, readiness.ts, …) are not drawn.
        if (!from.endsWith('.ts') && !part.endsWith('.ts')) imported.add(`${from} --> ${part}`);
    expect([...drawn].sort()).toEqual([...imported].sort());
  });
});
