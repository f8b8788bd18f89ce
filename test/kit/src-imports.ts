/**
 * The import graph of src/, read the way the compiler reads it: static,
 * type-only, re-exports, dynamic `import()` and `import('…')` types alike.
 * Files are keyed by their path under src/ (`audit/pass.ts`); a part of src/
 * is a top folder (`audit`) or a top-level file (`io.ts`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import ts from 'typescript';

export const SRC = join(import.meta.dirname, '..', '..', 'src');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(join(folder, e.name))
      : e.name.endsWith('.ts')
        ? [join(folder, e.name)]
        : [],
  );
}

/** `audit/pass.ts` → `audit`; `io.ts` → `io.ts`. */
export function partOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file : file.slice(0, slash);
}

/** Each file of src/ and the files of src/ it imports. `files` overrides texts (tests plant with it). */
export function fileImports(files: Readonly<Record<string, string>> = {}): Map<string, Set<string>> {
  const texts = new Map<string, string>();
  for (const path of sourceFiles(SRC))
    texts.set(relative(SRC, path).split(sep).join('/'), readFileSync(path, 'utf8'));
  for (const [file, text] of Object.entries(files)) texts.set(file, text);
  const graph = new Map<string, Set<string>>();
  for (const [file, text] of texts) {
    const targets = new Set<string>();
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      targets.add(posix.normalize(posix.join(dirname(file), fileName)).replace(/\.js$/, '.ts'));
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Part → the parts it imports, each with the number of its files that import it. */
export function partImports(graph: Map<string, Set<string>>): Map<string, Map<string, number>> {
  const parts = new Map<string, Map<string, number>>();
  for (const [file, targets] of graph) {
    const from = partOf(file);
    const to = parts.get(from) ?? new Map<string, number>();
    parts.set(from, to);
    for (const part of new Set([...targets].map(partOf)))
      if (part !== from) to.set(part, (to.get(part) ?? 0) + 1);
  }
  return parts;
}

/** The cycles of a graph: its strongly connected parts of more than one node (or a node importing itself). */
export function cycles(graph: ReadonlyMap<string, Iterable<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || [...(graph.get(node) ?? [])].includes(node)) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}
