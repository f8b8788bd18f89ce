/**
 * Input discovery: turns `-f` arguments into an ordered list of inputs.
 * Files are taken whatever their name; folders are walked recursively, in
 * name order, for `.yaml`, `.yml` and `.json` files; `-` is standard input.
 */
import { readdirSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { STDIN_DISPLAY } from '../findings/lines.js';

/**
 * One input, in the order given: a file, standard input, or a path that could
 * not be used (`message` says why). `display` is the path shown in reports.
 */
export type Input =
  | { readonly kind: 'file'; readonly path: string; readonly display: string }
  | { readonly kind: 'stdin'; readonly display: string }
  | { readonly kind: 'unreadable'; readonly display: string; readonly message: string };

const MANIFEST_EXTENSIONS = /\.(ya?ml|json)$/i;

/** `path` relative to `cwd` when it lies under it, otherwise absolute. */
function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

export function describeFsError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ELOOP':
      return 'too many levels of symbolic links';
    default:
      return e.message ?? String(err);
  }
}

/** What a discovery has found so far: inputs in order, and the real paths already taken. */
interface Discovery {
  readonly cwd: string;
  readonly inputs: Input[];
  readonly seen: Set<string>;
}

function problem(d: Discovery, path: string, err: unknown): void {
  d.inputs.push({ kind: 'unreadable', display: displayPath(path, d.cwd), message: describeFsError(err) });
}

function addFile(d: Discovery, path: string): void {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (err) {
    problem(d, path, err);
    return;
  }
  if (d.seen.has(real)) return;
  d.seen.add(real);
  d.inputs.push({ kind: 'file', path, display: displayPath(path, d.cwd) });
}

/** A folder entry as a folder, a file, or neither (a dangling link is not an input anyone asked for). */
function entryKind(entry: Dirent, path: string): 'dir' | 'file' | undefined {
  let isDir = entry.isDirectory();
  let isFile = entry.isFile();
  if (entry.isSymbolicLink()) {
    try {
      const st = statSync(path);
      isDir = st.isDirectory();
      isFile = st.isFile();
    } catch {
      return undefined;
    }
  }
  return isDir ? 'dir' : isFile ? 'file' : undefined;
}

function walk(d: Discovery, dir: string, visiting: Set<string>): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    problem(d, dir, err);
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    const kind = entryKind(entry, path);
    if (kind === 'dir') {
      const real = realpathSync(path);
      if (visiting.has(real)) continue; // a symlink cycle
      visiting.add(real);
      walk(d, path, visiting);
      visiting.delete(real);
    } else if (kind === 'file' && MANIFEST_EXTENSIONS.test(entry.name)) {
      addFile(d, path);
    }
  }
}

export function discoverInputs(args: readonly string[], cwd: string): Input[] {
  const d: Discovery = { cwd, inputs: [], seen: new Set<string>() };
  let stdinTaken = false;
  for (const arg of args) {
    if (arg === '-') {
      if (!stdinTaken) d.inputs.push({ kind: 'stdin', display: STDIN_DISPLAY });
      stdinTaken = true;
      continue;
    }
    const path = resolve(cwd, arg);
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch (err) {
      problem(d, path, err);
      continue;
    }
    if (isDir) walk(d, path, new Set([realpathSync(path)]));
    else addFile(d, path);
  }
  return d.inputs;
}
