#!/usr/bin/env node
/**
 * `routability-webhook <command>`: dispatches to one command module, loaded
 * lazily so that `check` and `review` never pay for the server or the
 * Kubernetes client they do not use.
 */
import type { CommandIO } from './io.js';
import { EXIT_USAGE, writeLine } from './io.js';

type Command = (argv: readonly string[], io: CommandIO) => Promise<number>;

const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  serve: {
    summary: 'run the HTTPS admission webhook',
    load: async () => (await import('./serve.js')).runServe,
  },
  review: {
    summary: 'answer one AdmissionReview from stdin, exactly as the server would',
    load: async () => (await import('./review.js')).runReview,
  },
  check: {
    summary: 'check Gateway manifests offline (for CI pipelines)',
    load: async () => (await import('./check.js')).runCheck,
  },
  'crd-patch': {
    summary: 'print (or apply) the JSON patch that adds routability to the Gateway CRD',
    load: async () => (await import('./crd-patch.js')).runCrdPatch,
  },
  certs: {
    summary: 'write a CA and a serving certificate for the webhook',
    load: async () => (await import('./certs.js')).runCerts,
  },
};

export function usage(): string {
  const lines = ['Usage: routability-webhook <command> [flags]', '', 'Commands:'];
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(10)} ${c.summary}`);
  lines.push('', 'Run `routability-webhook <command> --help` for its flags.');
  return lines.join('\n');
}

export async function main(argv: readonly string[], io: CommandIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    writeLine(name === undefined ? io.stderr : io.stdout, usage());
    return name === undefined ? EXIT_USAGE : 0;
  }
  const command = COMMANDS[name];
  if (!command || !Object.prototype.hasOwnProperty.call(COMMANDS, name)) {
    writeLine(io.stderr, `routability-webhook: unknown command "${name}"\n\n${usage()}`);
    return EXIT_USAGE;
  }
  return (await command.load())(rest, io);
}

const isEntryPoint =
  process.argv[1] !== undefined &&
  import.meta.url ===
    (await import('node:url')).pathToFileURL((await import('node:fs')).realpathSync(process.argv[1])).href;
if (isEntryPoint) {
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
