#!/usr/bin/env node
// Renders every ```mermaid block of README.md, docs/*.md and the chart README to SVG (and PNG)
// under .cache/diagrams/, with the Mermaid that GitHub's renderer also uses. A block Mermaid
// cannot parse or lay out fails the run, naming the file and line.
//
// Run through `npm run docs:diagrams`, which installs this folder's pinned tools first. The
// browser is the system's Chromium (Debian: apt-get install chromium), never a downloaded one:
// PUPPETEER_EXECUTABLE_PATH, else /usr/bin/chromium.
import { Buffer } from 'node:buffer';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderMermaid } from '@mermaid-js/mermaid-cli';
import puppeteer from 'puppeteer';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = join(repo, '.cache', 'diagrams');

const browserPath = process.env.PUPPETEER_EXECUTABLE_PATH || '/usr/bin/chromium';
if (!existsSync(browserPath)) {
  console.error(
    `docs:diagrams: no browser at ${browserPath}; install Debian's chromium or set PUPPETEER_EXECUTABLE_PATH`,
  );
  process.exit(2);
}

const docs = [
  'README.md',
  ...['docs', 'docs/dev'].flatMap((folder) =>
    readdirSync(join(repo, folder))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `${folder}/${f}`),
  ),
  'charts/gateway-routability-webhook/README.md',
].filter((f) => existsSync(join(repo, f)));

/** Mermaid blocks with the line of their opening fence. */
function diagrams(doc) {
  const lines = readFileSync(join(repo, doc), 'utf8').split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*```mermaid\s*$/.test(lines[i])) continue;
    const start = i + 1;
    while (++i < lines.length && !/^\s*```\s*$/.test(lines[i]));
    found.push({ line: start, text: lines.slice(start, i).join('\n') });
  }
  return found;
}

const browser = await puppeteer.launch({
  executablePath: browserPath,
  headless: true,
  // As root (CI here) Chromium needs --no-sandbox; the rest keeps it off the network it cannot reach.
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});

mkdirSync(out, { recursive: true });
let rendered = 0;
const failures = [];
try {
  for (const doc of docs) {
    for (const { line, text } of diagrams(doc)) {
      const name = `${doc.replace(/[/.]/g, '_')}-${line}`;
      try {
        const svg = await renderMermaid(browser, text, 'svg', { mermaidConfig: { theme: 'default' } });
        const body = Buffer.from(svg.data).toString('utf8');
        // Mermaid draws a "Syntax error" picture for some errors instead of throwing.
        if (!body.includes('<svg') || /Syntax error in text|aria-roledescription="error"/.test(body))
          throw new Error('Mermaid drew its error picture');
        writeFileSync(join(out, `${name}.svg`), body);
        const png = await renderMermaid(browser, text, 'png', { mermaidConfig: { theme: 'default' } });
        writeFileSync(join(out, `${name}.png`), png.data);
        rendered++;
        console.log(`docs:diagrams: ${doc}:${line} → .cache/diagrams/${name}.svg`);
      } catch (err) {
        failures.push(
          `${doc}:${line}: ${String(err?.message ?? err)
            .split('\n')
            .slice(0, 4)
            .join(' ')}`,
        );
      }
    }
  }
} finally {
  await browser.close();
}

for (const f of failures) console.error(`docs:diagrams: FAILED ${f}`);
if (rendered === 0 && failures.length === 0) {
  console.error('docs:diagrams: no Mermaid diagram found');
  process.exit(1);
}
console.log(`docs:diagrams: ${rendered} rendered, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
