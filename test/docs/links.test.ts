/**
 * Every link of the pages a user reads (README.md, CONTRIBUTING.md, CHANGELOG.md, SECURITY.md, docs/*.md, docs/dev/*.md,
 * the chart README)
 * leads somewhere: a relative link to a file of the repository that exists, and an anchor
 * (`#section`, in the same page or another) to a heading of that page, spelled as GitHub spells
 * heading anchors. Links to other sites are not fetched (CI has no reason to depend on them).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docFiles, proseLines, REPO } from './markdown.js';

const PAGES = [
  ...docFiles(),
  ...['CONTRIBUTING.md', 'CHANGELOG.md', 'SECURITY.md'].filter((f) => existsSync(join(REPO, f))),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a page offers: its headings (repeats get -1, -2, … as on GitHub) and explicit ids. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text: line } of proseLines(text, true)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  }
  return out;
}

const headingsOf = (path: string) => anchors(readFileSync(path, 'utf8'));

interface Link {
  readonly page: string;
  readonly line: number;
  readonly target: string;
}

export function links(page: string, text: string): Link[] {
  const out: Link[] = [];
  for (const { line, text: prose } of proseLines(text)) {
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      out.push({ page, line, target: m[1]! });
    const ref = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(prose);
    if (ref) out.push({ page, line, target: ref[1]! });
    for (const m of prose.matchAll(/<a\s[^>]*href="([^"]+)"/g)) out.push({ page, line, target: m[1]! });
  }
  return out;
}

/** Why a link leads nowhere, or undefined when it is fine. */
function broken(link: Link): string | undefined {
  const { target, page } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: …
  const [file = '', anchor] = target.split('#', 2);
  const path = file === '' ? join(REPO, page) : resolve(dirname(join(REPO, page)), decodeURIComponent(file));
  const inRepo = relative(REPO, path);
  if (inRepo.startsWith('..')) return `points outside the repository (${inRepo})`;
  if (!existsSync(path)) return `${inRepo} does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(path).isDirectory() || !path.endsWith('.md'))
    return `#${anchor} on a file that is not Markdown`;
  if (/^L\d+(-L\d+)?$/.test(anchor)) return undefined;
  return headingsOf(path).has(anchor) ? undefined : `${inRepo} has no heading with the anchor #${anchor}`;
}

describe('links and anchors', () => {
  it.each(PAGES)('%s: every relative link and anchor leads somewhere', (page) => {
    const problems = links(page, readFileSync(join(REPO, page), 'utf8'))
      .map((l) => ({ l, why: broken(l) }))
      .filter(({ why }) => why !== undefined)
      .map(({ l, why }) => `${l.page}:${l.line}: (${l.target}) ${why}`);
    expect(problems, 'fix the link, or the heading it names (anchors are spelled as GitHub does)').toEqual(
      [],
    );
  });

  it("every page of docs/ is linked from the README's Getting started list or the docs/README.md index", () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const start = readme.slice(readme.indexOf('\n## Getting started\n'));
    const index = readFileSync(join(REPO, 'docs', 'README.md'), 'utf8');
    const listed = new Set([
      ...[...start.matchAll(/\]\((docs\/[^)#]+\.md)\)/g)].map((m) => m[1]!),
      ...[...index.matchAll(/\]\(([^)#:]+\.md)\)/g)].map((m) => `docs/${m[1]!}`),
      'docs/README.md',
    ]);
    const pages = docFiles().filter((d) => d.startsWith('docs/'));
    expect(
      pages.filter((p) => !listed.has(p)),
      "add each reference page to docs/README.md (a page of the new user's path: README § Getting started)",
    ).toEqual([]);
  });

  it('the checker finds what it must (planted cases)', () => {
    const page = 'docs/planted.md';
    const text = [
      '# A page: `with-code` and § signs',
      'See [here](#a-page-with-code-and--signs), [there](install.md#no-such-step),',
      '[gone](nowhere.md), [out](../../outside/x.md) and [fine](install.md#3-install-permissive).',
      '```sh',
      'echo "[not a link](nowhere.md)"',
      '```',
    ].join('\n');
    const found = links(page, text).map((l) => [l.target, broken(l)]);
    expect(found).toEqual([
      ['#a-page-with-code-and--signs', 'docs/planted.md does not exist'],
      ['install.md#no-such-step', 'docs/install.md has no heading with the anchor #no-such-step'],
      ['nowhere.md', 'docs/nowhere.md does not exist'],
      ['../../outside/x.md', 'points outside the repository (../outside/x.md)'],
      ['install.md#3-install-permissive', undefined],
    ]);
    expect([...anchors(text)]).toEqual(['a-page-with-code-and--signs']);
    expect(slug("Moving a cluster from this project's CRD patch")).toBe(
      'moving-a-cluster-from-this-projects-crd-patch',
    );
    expect([...anchors('## Upgrades\n## Upgrades\n<a id="x"></a>')]).toEqual(['upgrades', 'upgrades-1', 'x']);
  });
});
