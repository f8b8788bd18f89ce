/**
 * A new user's path (the README's "Getting started" list: install → try → operate → troubleshoot →
 * upgrade → uninstall) reads in at most ten minutes: the words of the README and of the path's pages
 * at 200 words a minute. Words are what a reader reads: prose, headings, table cells, link texts and
 * inline code; fenced blocks (commands to copy, output, diagrams) and HTML comments (the doc tests'
 * markers) are not counted, nor link targets. Reference detail belongs on the reference pages the
 * path links (listed in docs/README.md), which are not on the path.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proseLines, REPO } from './markdown.js';

const WORDS_PER_MINUTE = 200;
const MINUTES = 10;
/** The steps of the path, in order, as the README's list names them. */
const STEPS = [/^install/i, /^try/i, /^operate/i, /^troubleshoot/i, /^upgrade/i, /^uninstall/i];

/** The words a reader reads on a page (see the file comment). */
export function readWords(text: string): number {
  const prose = proseLines(text, true)
    .map((l) => l.text)
    .join('\n')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/\]\([^)]*\)/g, ']')
    .replace(/^\s*\|?[\s:|-]+\|?\s*$/gm, ' ');
  return prose.split(/[\s|]+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

/** The pages the README's "Getting started" list links, in order, with their link texts. */
export function pathOf(readme: string): { label: string; page: string }[] {
  const start = readme.indexOf('\n## Getting started\n');
  if (start < 0) return [];
  const section = readme
    .slice(start + 1)
    .split('\n## ')[0]!
    .replace(/^## Getting started\n/, '');
  return [...section.matchAll(/^\d+\.\s+\[([^\]]+)\]\((docs\/[^)#]+\.md)\)/gm)].map((m) => ({
    label: m[1]!,
    page: m[2]!,
  }));
}

const read = (path: string) => readFileSync(join(REPO, path), 'utf8');

describe("a new user's path", () => {
  const path = pathOf(read('README.md'));

  it('is one list in the README: install, try, operate, troubleshoot, upgrade, uninstall', () => {
    expect(path.length, 'README.md needs a "## Getting started" numbered list of the path pages').toBe(
      STEPS.length,
    );
    path.forEach(({ label }, i) => expect(label, `step ${i + 1}`).toMatch(STEPS[i]!));
  });

  it(`reads in at most ${MINUTES} minutes at ${WORDS_PER_MINUTE} words a minute`, () => {
    const pages = ['README.md', ...path.map((p) => p.page)];
    const counted = pages.map((page) => ({ page, words: readWords(read(page)) }));
    const total = counted.reduce((sum, c) => sum + c.words, 0);
    const minutes = (words: number) => (words / WORDS_PER_MINUTE).toFixed(1);
    console.log(
      [
        `reading time of the path at ${WORDS_PER_MINUTE} words a minute:`,
        ...counted.map(
          (c) => `  ${c.page.padEnd(28)} ${String(c.words).padStart(5)} words  ${minutes(c.words)} min`,
        ),
        `  ${'total'.padEnd(28)} ${String(total).padStart(5)} words  ${minutes(total)} min`,
      ].join('\n'),
    );
    expect(
      total / WORDS_PER_MINUTE,
      'move reference detail from the path pages to the reference pages they link',
    ).toBeLessThanOrEqual(MINUTES);
  });

  it('counts what a reader reads, not code, markers or link targets (planted page)', () => {
    const page = [
      '# Two words',
      '',
      'Run `helm install` as [the guide](docs/some/long/path.md#anchor) says.',
      '<!-- doctest: run -->',
      '```sh',
      'helm install a b c d e f g h',
      '```',
      '',
      '| what | where |',
      '|---|:---:|',
      '| the image | ghcr.io |',
    ].join('\n');
    // "Two words" 2; "Run helm install as the guide says." 7; table: what where the image ghcr.io 5.
    expect(readWords(page)).toBe(14);
    expect(
      pathOf(
        '# x\n\n## Getting started\n\n1. [Install](docs/a.md): one\n2. [Try](docs/b.md)\n\n## Next\n3. [No](docs/c.md)',
      ),
    ).toEqual([
      { label: 'Install', page: 'docs/a.md' },
      { label: 'Try', page: 'docs/b.md' },
    ]);
  });
});
