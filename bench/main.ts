/**
 * `npm run bench -- NAME [ARGS]`: the one entry to the benchmarks. The npm script builds dist/ and
 * compiles bench/ once; this runs bench NAME (bench/benches.json lists them) in a child process
 * with ARGS, and exits as it exits. Without a NAME, or with options first
 * (`npm run bench -- --rounds 5`), it runs the default, `run`. An unknown NAME prints the list
 * and exits 2.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../test/kit/server-process.js';

interface Bench {
  /** Its source under the repository root: a .ts compiled to .cache/bench/, or a .mjs run as it is. */
  readonly script: string;
  readonly about: string;
}

const DEFAULT = 'run';
const ROOT = repoRoot();
const BENCHES = JSON.parse(readFileSync(join(ROOT, 'bench', 'benches.json'), 'utf8')) as Record<
  string,
  Bench
>;

function list(): string {
  const width = Math.max(...Object.keys(BENCHES).map((n) => n.length));
  return Object.entries(BENCHES)
    .map(([name, b]) => `  ${name.padEnd(width)}  ${b.about}`)
    .join('\n');
}

/** The file node runs for a bench. */
function entry(bench: Bench): string {
  return bench.script.endsWith('.ts')
    ? join(ROOT, '.cache', 'bench', bench.script.replace(/\.ts$/, '.js'))
    : join(ROOT, bench.script);
}

const [first, ...rest] = process.argv.slice(2);
const named = first !== undefined && !first.startsWith('-');
const name = named ? first : DEFAULT;
const bench = Object.hasOwn(BENCHES, name) ? BENCHES[name] : undefined;
if (!bench) {
  process.stderr.write(
    `npm run bench: unknown benchmark ${JSON.stringify(name)}; one of:\n${list()}\n` +
      `usage: npm run bench -- [NAME] [ARGS] (default: ${DEFAULT})\n`,
  );
  process.exit(2);
}
const args = named ? rest : process.argv.slice(2);
const child = spawn(process.execPath, [entry(bench), ...args], { stdio: 'inherit' });
// Ctrl-C reaches the whole process group, the bench included: wait for it to finish its own way.
// A SIGTERM sent to this process alone is passed on.
const onInt = () => undefined;
const onTerm = () => child.kill('SIGTERM');
process.on('SIGINT', onInt);
process.on('SIGTERM', onTerm);
child.once('exit', (code, signal) => {
  process.off('SIGINT', onInt);
  process.off('SIGTERM', onTerm);
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
