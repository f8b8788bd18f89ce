#!/usr/bin/env node
/**
 * `routability-webhook <command>`: dispatches to one command module, loaded
 * lazily so that `check` and `review` never pay for the server or the
 * Kubernetes client they do not use. Each module declares its command
 * (name, summary, flags, run) in one place: see command.ts.
 */
import { EXIT_OK, EXIT_USAGE, quietOnClosedPipe, writeLine, type CommandIO } from '../io.js';
import type { Command } from './command.js';

/** In the order `--help` lists them. */
const COMMANDS: Readonly<Record<string, () => Promise<{ command: Command }>>> = {
  serve: () => import('./serve.js'),
  review: () => import('./review.js'),
  check: () => import('./check.js'),
  audit: () => import('./audit.js'),
  'crd-patch': () => import('./crd-patch.js'),
  certs: () => import('./certs.js'),
  policy: () => import('./policy.js'),
  verify: () => import('./verify.js'),
  disarm: () => import('./disarm.js'),
};

async function usage(): Promise<string> {
  const lines = ['Usage: routability-webhook <command> [flags]', '', 'Commands:'];
  for (const load of Object.values(COMMANDS)) {
    const { command } = await load();
    lines.push(`  ${command.name.padEnd(10)} ${command.summary}`);
  }
  lines.push('', 'Run `routability-webhook <command> --help` for its flags.');
  return lines.join('\n');
}

export async function main(argv: readonly string[], io: CommandIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    writeLine(name === undefined ? io.stderr : io.stdout, await usage());
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const load = Object.prototype.hasOwnProperty.call(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) {
    writeLine(io.stderr, `routability-webhook: unknown command "${name}"\n\n${await usage()}`);
    return EXIT_USAGE;
  }
  return (await load()).command.main(rest, io);
}

const isEntryPoint =
  process.argv[1] !== undefined &&
  import.meta.url ===
    (await import('node:url')).pathToFileURL((await import('node:fs')).realpathSync(process.argv[1])).href;
if (isEntryPoint) {
  for (const [name, stream] of [
    ['stdout', process.stdout],
    ['stderr', process.stderr],
  ] as const) {
    quietOnClosedPipe(stream, (err) => {
      // stderr may be the stream that failed: say it where it can still be read, once.
      if (name === 'stdout')
        process.stderr.write(`routability-webhook: cannot write to ${name}: ${err.message}\n`);
      process.exit(1);
    });
  }
  const code = await main(process.argv.slice(2), {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
  });
  // serve keeps the process alive itself and exits on its own signal handling.
  if (code >= 0) process.exitCode = code;
}
