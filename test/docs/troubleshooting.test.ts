/**
 * docs/troubleshooting.md quotes the server's own texts (readiness reasons, error answers, log
 * lines): each quote must still be in the code, so that a reworded message fails here until the page
 * follows. A quote is cut where the page writes `…` or a `<placeholder>` and where the code joins
 * a message from its parts (`: `, `; `, ` (`, `, or `, a constant, a number); every piece of a dozen characters or more must occur in a
 * string of src/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proseLines, REPO } from './markdown.js';

const PAGE = 'docs/troubleshooting.md';
/** Texts the page quotes from the apiserver and kubectl, not from this server. */
const APISERVER = ['x509', 'context deadline exceeded', 'no endpoints available', 'connection refused'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [readFileSync(join(dir, e.name), 'utf8')]
        : [],
  );
}

/** The quoted texts of the page: inline code of 20 characters or more that is not a command or query. */
export function quotes(text: string): string[] {
  const prose = proseLines(text, true)
    .map((l) => l.text)
    .join('\n');
  return [...prose.matchAll(/`([^`]+)`/g)]
    .map((m) => m[1]!.replace(/\s+/g, ' '))
    .filter((q) => q.length >= 20 && q.includes(' '))
    .filter((q) => !/^(kubectl|curl|helm|routability-webhook|sum|max)\b/.test(q))
    .filter((q) => !APISERVER.some((t) => q.includes(t)) && !q.startsWith('allocatedIPs.'));
}

/** The literal pieces of a quote, as they stand in the code. */
export function pieces(quote: string): string[] {
  return (
    quote
      .replace(/^- [a-z-]+: /, '') // the /readyz line's "- part: " prefix is added by the health endpoint
      .replace(/^(HTTP \d+ )/, '')
      // Where the code puts in a constant or a number: the CRD's name, the byte limit.
      .replaceAll('gateways.gateway.networking.k8s.io', '…')
      .split(/…|<[^>]+>|: |; | \(|\)|, or |"|\d{4,}/)
      .map((p) => p.trim())
      .filter((p) => p.length >= 12)
  );
}

describe(`${PAGE} quotes the code`, () => {
  const code = sources(join(REPO, 'src')).join('\n');
  const page = readFileSync(join(REPO, PAGE), 'utf8');

  it('every quoted message is still in src/', () => {
    const missing = quotes(page).flatMap((q) =>
      pieces(q)
        .filter((p) => !code.includes(p))
        .map((p) => `"${p}" (from \`${q}\`)`),
    );
    expect(missing, `${PAGE} quotes texts the code no longer has: reword the page`).toEqual([]);
  });

  it('quotes the readiness parts the server has, and finds a reworded message (planted)', () => {
    expect(quotes(page).length).toBeGreaterThan(15);
    for (const part of ['service-ranges', 'gep-revision', 'certificate', 'shutdown'])
      expect(page).toContain(`\`- ${part}: `);
    const planted = pieces('- service-ranges: the cluster has no ServiceCIDR thingies: set --service-cidr …');
    expect(planted.filter((p) => !code.includes(p))).toEqual(['the cluster has no ServiceCIDR thingies']);
  });
});
