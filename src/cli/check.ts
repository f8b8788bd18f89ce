import type { CommandIO } from './io.js';
import { EXIT_USAGE, writeLine } from './io.js';

// Placeholder until the command lands (tracked in its issue); fails loudly, never silently.
export async function runCheck(_argv: readonly string[], io: CommandIO): Promise<number> {
  writeLine(io.stderr, 'routability-webhook check: not available in this build yet');
  return EXIT_USAGE;
}
