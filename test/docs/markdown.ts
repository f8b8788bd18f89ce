/**
 * Reads the repository's Markdown for the doc tests: fenced blocks with the `<!-- doctest: … -->`
 * marker (an HTML comment, invisible on GitHub) on the line right above them, and the standalone
 * `setup` markers. The marker language is described in docs/dev/writing-docs.md.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '..', '..');

/** The Markdown pages of one folder of the repository, sorted, as repository paths. */
function pagesIn(folder: string): string[] {
  if (!existsSync(join(REPO, folder))) return [];
  return readdirSync(join(REPO, folder))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `${folder}/${f}`);
}

/**
 * Every Markdown page of the documentation: README, docs/ (for users), docs/dev/ (for people
 * changing the code), the chart README.
 */
export function docFiles(): string[] {
  const chart = 'charts/gateway-routability-webhook/README.md';
  return [
    'README.md',
    ...pagesIn('docs'),
    ...pagesIn('docs/dev'),
    ...(existsSync(join(REPO, chart)) ? [chart] : []),
  ];
}

export type Marker =
  | { readonly kind: 'run'; readonly exit: number }
  | { readonly kind: 'output' }
  | { readonly kind: 'file'; readonly name: string }
  | { readonly kind: 'skip'; readonly reason: string }
  | { readonly kind: 'setup'; readonly command: string }
  | { readonly kind: 'kubectl-apply'; readonly file: string; readonly args: readonly string[] };

export interface Block {
  readonly doc: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's info string, first word (`sh`, `yaml`, `mermaid`, …). */
  readonly lang: string;
  readonly body: string;
  readonly marker: Marker | undefined;
}

/** A doc, in order: blocks and the standalone setup markers between them. */
export type Step =
  | { readonly type: 'block'; readonly block: Block }
  | { readonly type: 'setup'; readonly line: number; readonly command: string };

const MARKER = /^\s*<!-- doctest: (\S+)(?:\s+(.*?))?\s*-->\s*$/;
const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^`\s]*)/;

export function parseMarker(text: string, where: string): Marker {
  const m = MARKER.exec(text);
  if (!m) throw new Error(`${where}: not a doctest marker: ${text}`);
  const [, kind, rest = ''] = m;
  switch (kind) {
    case 'run': {
      const exit = /^exit=(\d+)$/.exec(rest);
      if (rest !== '' && !exit) throw new Error(`${where}: "run" takes only exit=N, got "${rest}"`);
      return { kind: 'run', exit: exit ? Number(exit[1]) : 0 };
    }
    case 'output':
      return { kind: 'output' };
    case 'file':
      if (!/^[\w./-]+$/.test(rest) || rest.includes('..'))
        throw new Error(`${where}: "file" needs a relative name`);
      return { kind: 'file', name: rest };
    case 'skip':
      if (rest.length < 3) throw new Error(`${where}: "skip" needs a reason`);
      return { kind: 'skip', reason: rest };
    case 'setup':
      if (rest === '') throw new Error(`${where}: "setup" needs a command`);
      return { kind: 'setup', command: rest };
    case 'kubectl-apply': {
      const [file, ...args] = rest.split(/\s+/);
      if (!file) throw new Error(`${where}: "kubectl-apply" needs a file name`);
      return { kind: 'kubectl-apply', file, args };
    }
    default:
      throw new Error(`${where}: unknown doctest marker "${kind}"`);
  }
}

export function parseDoc(doc: string, text = readFileSync(join(REPO, doc), 'utf8')): Step[] {
  const lines = text.split('\n');
  const steps: Step[] = [];
  let pending: Marker | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (MARKER.test(line)) {
      const marker = parseMarker(line, `${doc}:${i + 1}`);
      if (marker.kind === 'setup') steps.push({ type: 'setup', line: i + 1, command: marker.command });
      else pending = marker;
      continue;
    }
    const open = FENCE.exec(line);
    if (!open) {
      if (pending && line.trim() !== '')
        throw new Error(`${doc}:${i}: a doctest marker must stand right above a fence`);
      continue;
    }
    const [, indent = '', fence = '```', lang = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j]!;
      const t = l.trim();
      if (t.startsWith(fence) && t.replace(fence[0] === '`' ? /`/g : /~/g, '') === '') break;
      body.push(l.startsWith(indent) ? l.slice(indent.length) : l.trimStart());
    }
    if (j === lines.length) throw new Error(`${doc}:${i + 1}: fence never closed`);
    steps.push({
      type: 'block',
      block: { doc, line: i + 1, lang, body: body.length ? `${body.join('\n')}\n` : '', marker: pending },
    });
    pending = undefined;
    i = j;
  }
  return steps;
}

export function blocks(doc: string): Block[] {
  return parseDoc(doc).flatMap((s) => (s.type === 'block' ? [s.block] : []));
}

/** Lines compared as a reader compares them: trailing spaces and trailing blank lines do not count. */
export function normalise(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
    .replace(/\n+$/, '');
}

/** The page's text outside fenced blocks (and, unless keepCode, inline code), line by line. */
export function proseLines(text: string, keepCode = false): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((raw, i) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (open) {
      if (fence === undefined) fence = open[1]![0]!.repeat(open[1]!.length);
      else if (raw.trim().startsWith(fence) && raw.trim().replace(/[`~]/g, '') === '') fence = undefined;
      return;
    }
    if (fence === undefined) out.push({ line: i + 1, text: keepCode ? raw : raw.replace(/`[^`]*`/g, '``') });
  });
  return out;
}
