/**
 * vitest globalSetup: many tests run the built CLI (dist/cli/main.js) in a
 * child process, and a dist/ older than src/ would test yesterday's code while
 * the run reports today's as green. `npm test` builds first; a bare
 * `npx vitest run` does not, so here every source file's compiled twin must be
 * at least as new as the source, or dist/ is rebuilt before any test starts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The first source whose compiled file is missing or older, if any. */
export function staleSource(root = ROOT): string | undefined {
  for (const source of sources(join(root, 'src'))) {
    const built = join(root, 'dist', relative(join(root, 'src'), source)).replace(/\.ts$/, '.js');
    if (!existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs)
      return relative(root, source);
  }
  return undefined;
}

export default function setup(): void {
  const stale = staleSource();
  if (stale === undefined) return;
  process.stderr.write(`dist/ is older than ${stale}: rebuilding before the tests (npm run build)\n`);
  try {
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
  } catch (err) {
    const out = (err as { stdout?: Buffer }).stdout?.toString() ?? '';
    throw new Error(`dist/ is stale and the build failed, so tests of the built CLI cannot run:\n${out}`);
  }
  const still = staleSource();
  if (still !== undefined) throw new Error(`dist/ is still older than ${still} after the build`);
}
