/**
 * One shape for every command: it declares its name, summary, flags, how the
 * flag values become its options, and what it runs. `--help`, the
 * `routability-webhook NAME:` error prefix and the usage exit code are
 * produced here, once, for all of them.
 */
import {
  commandHelp,
  parseFlags,
  type FlagDefinitions,
  type FlagValues,
  type HelpText,
  type Parsed,
} from '../config/flags.js';
import { EXIT_OK, EXIT_USAGE, writeLine, type CommandIO } from '../io.js';

/** What a running command is handed: its I/O, and the one way to end with a usage error. */
export interface CommandRun {
  readonly io: CommandIO;
  /** Writes `routability-webhook NAME: message` (plus the usage hint when asked) and returns exit 2. */
  fail(message: string, options?: { readonly hint?: boolean }): typeof EXIT_USAGE;
}

export interface CommandSpec<Defs extends FlagDefinitions, Options> {
  readonly name: string;
  /** One line, for `routability-webhook --help`. */
  readonly summary: string;
  readonly flags: Defs;
  /** What `--help` (or `-h`) says besides the flags; config/flags.ts's commandHelp gives every command one shape. */
  readonly help: HelpText;
  /**
   * Arguments that are not flags, when the command takes them (`check a.yaml b.yaml`);
   * absent, any such argument is a usage error. `name` is how usage errors call them.
   */
  readonly positionals?: { readonly name: string };
  /** Turns the flag values (and the arguments, if declared) into the command's options; an error here is a usage error. */
  readonly options: (flags: FlagValues<Defs>, positionals: readonly string[]) => Parsed<Options>;
  readonly run: (options: Options, run: CommandRun) => Promise<number>;
  /** Appended to usage errors: a pointer to `--help`, or the usage itself. */
  readonly usageHint?: () => string;
}

export type CommandMain = (argv: readonly string[], io: CommandIO) => Promise<number>;

export interface Command {
  readonly name: string;
  readonly summary: string;
  /** Its flag declarations (the doc tests compare them with what --help says). */
  readonly flags: FlagDefinitions;
  readonly main: CommandMain;
}

function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/** The usage hint most commands print after a flag error: where their help is. */
export const helpHint = (name: string) => (): string =>
  `\nRun \`routability-webhook ${name} --help\` for usage.`;

export function defineCommand<Defs extends FlagDefinitions, Options>(
  spec: CommandSpec<Defs, Options>,
): Command {
  const main: CommandMain = async (argv, io) => {
    const fail: CommandRun['fail'] = (message, options = {}) => {
      const hint = options.hint && spec.usageHint ? spec.usageHint() : '';
      writeLine(io.stderr, `routability-webhook ${spec.name}: ${message}${hint}`);
      return EXIT_USAGE;
    };
    if (wantsHelp(argv)) {
      writeLine(io.stdout, commandHelp(spec.name, spec.flags, spec.help));
      return EXIT_OK;
    }
    const parsed = parseFlags(spec.flags, argv, io.env, { positionals: spec.positionals !== undefined });
    if (!parsed.ok) return fail(parsed.error, { hint: true });
    const options = spec.options(parsed.value.flags, parsed.value.positionals);
    if (!options.ok) return fail(options.error, { hint: true });
    return spec.run(options.value, { io, fail });
  };
  return { name: spec.name, summary: spec.summary, flags: spec.flags, main };
}
