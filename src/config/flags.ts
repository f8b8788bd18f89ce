/**
 * Flags, declared once and read with their types. A command lists its flags
 * as a `FlagDefinitions` object (`as const satisfies FlagDefinitions`), and
 * `parseFlags` returns values whose types come from those declarations:
 * a `port` flag is a number, a `list` flag a string array, a flag with
 * `choices` the union of its choices, a `duration` flag milliseconds, and a
 * flag with no default may be undefined. Each flag `--some-flag` also reads `ROUTABILITY_WEBHOOK_SOME_FLAG`
 * (the command line wins) unless it is declared `noEnv`.
 */
import { parseArgs } from 'node:util';
import { firstLine } from '../error-text.js';

export interface DurationBounds {
  /** Bounds as the flag's help and errors spell them (`10s`, `24h`). */
  readonly min: string;
  readonly max: string;
  /** `0` turns the feature off (value 0). */
  readonly zeroIsOff?: boolean;
}

interface FlagCommon {
  readonly short?: string;
  readonly description: string;
  /** Not read from the environment (e.g. -f inputs, --help). */
  readonly noEnv?: boolean;
}

export type FlagDefinition =
  | (FlagCommon & {
      readonly kind: 'string';
      readonly default?: string;
      readonly choices?: readonly string[];
    })
  | (FlagCommon & { readonly kind: 'list'; readonly default?: readonly string[] })
  | (FlagCommon & { readonly kind: 'boolean'; readonly default?: boolean })
  | (FlagCommon & { readonly kind: 'port' | 'integer'; readonly default?: number })
  | (FlagCommon & DurationBounds & { readonly kind: 'duration'; readonly default?: string });

export type FlagDefinitions = Readonly<Record<string, FlagDefinition>>;

/** The value type one declaration yields (before "absent" is considered). */
type ValueOf<D> = D extends { readonly kind: 'boolean' }
  ? boolean
  : D extends { readonly kind: 'list' }
    ? readonly string[]
    : D extends { readonly kind: 'port' | 'integer' | 'duration' }
      ? number
      : D extends { readonly choices: readonly (infer C)[] }
        ? C
        : string;

type WithDefault<Defs> = {
  readonly [K in keyof Defs as Defs[K] extends { readonly default: unknown } ? K : never]: ValueOf<Defs[K]>;
};
type WithoutDefault<Defs> = {
  readonly [K in keyof Defs as Defs[K] extends { readonly default: unknown } ? never : K]?:
    ValueOf<Defs[K]> | undefined;
};

/** The parsed values of a set of declarations: flags with a default are always set. */
export type FlagValues<Defs extends FlagDefinitions> = WithDefault<Defs> & WithoutDefault<Defs>;

type AnyFlagValue = string | boolean | number | readonly string[] | undefined;
/** A value as node:util's parseArgs returns it. */
type RawValue = string | boolean | (string | boolean)[];

export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

const ENV_PREFIX = 'ROUTABILITY_WEBHOOK_';

export function envName(flag: string): string {
  return ENV_PREFIX + flag.toUpperCase().replaceAll('-', '_');
}

/** Splits repeated and comma-separated values: `--x a,b --x c` → [a, b, c]. */
function splitList(values: readonly string[]): string[] {
  return values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function convertBoolean(raw: string | boolean, from: string): Parsed<boolean> {
  if (typeof raw === 'boolean') return { ok: true, value: raw };
  const text = raw.toLowerCase();
  if (['true', '1', 'yes'].includes(text)) return { ok: true, value: true };
  if (['false', '0', 'no'].includes(text)) return { ok: true, value: false };
  return { ok: false, error: `${from}: must be true or false, got "${raw}"` };
}

function convertNumber(kind: 'port' | 'integer', text: string, from: string): Parsed<number> {
  const n = Number(text);
  const max = kind === 'port' ? 65535 : Number.MAX_SAFE_INTEGER;
  // Port 0 asks the kernel for a free port (tests); the bound port is logged.
  if (!/^\d+$/.test(text) || n > max)
    return {
      ok: false,
      error: `${from}: must be ${kind === 'port' ? 'a port from 0 to 65535' : 'a whole number'}, got "${text}"`,
    };
  return { ok: true, value: n };
}

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000 };

function milliseconds(text: string): number {
  const m = /^(\d{1,6})(s|m|h)$/.exec(text);
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : Number.NaN;
}

/**
 * A `duration` flag's text: `0` (off, where the flag allows it) or a whole
 * number of seconds, minutes or hours (`90s`, `5m`, `1h`) within the flag's
 * bounds, in milliseconds.
 */
export function parseDuration(text: string, bounds: DurationBounds, flag: string): Parsed<number> {
  if (bounds.zeroIsOff && text === '0') return { ok: true, value: 0 };
  const ms = milliseconds(text);
  if (!Number.isFinite(ms) || ms < milliseconds(bounds.min) || ms > milliseconds(bounds.max))
    return {
      ok: false,
      error: `${flag}: "${text}" is not ${bounds.zeroIsOff ? '0 (off) or ' : ''}a duration from ${bounds.min} to ${bounds.max} (e.g. 90s, 5m, 1h)`,
    };
  return { ok: true, value: ms };
}

function convert(def: FlagDefinition, raw: RawValue, from: string, name: string): Parsed<AnyFlagValue> {
  switch (def.kind) {
    case 'duration':
      // Its error names the flag wherever the value came from, as it always has.
      return parseDuration(String(raw), def, `--${name}`);
    case 'boolean':
      return convertBoolean(typeof raw === 'boolean' ? raw : String(raw), from);
    case 'list':
      return { ok: true, value: splitList(Array.isArray(raw) ? raw.map(String) : [String(raw)]) };
    case 'port':
    case 'integer':
      return convertNumber(def.kind, String(raw), from);
    case 'string': {
      const text = String(raw);
      if (def.choices && !def.choices.includes(text))
        return { ok: false, error: `${from}: must be one of ${def.choices.join(', ')}, got "${text}"` };
      return { ok: true, value: text };
    }
  }
}

type ArgOptions = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

function argOptions(defs: FlagDefinitions): ArgOptions {
  const options: ArgOptions = {};
  for (const [name, def] of Object.entries(defs)) {
    options[name] = {
      type: def.kind === 'boolean' ? 'boolean' : 'string',
      ...(def.kind === 'list' ? { multiple: true } : {}),
      ...(def.short ? { short: def.short } : {}),
    };
  }
  return options;
}

/** One flag's value: the command line, else the environment, else the declared default. */
function flagValue(
  name: string,
  def: FlagDefinition,
  fromArgv: RawValue | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Parsed<AnyFlagValue> {
  if (fromArgv !== undefined) return convert(def, fromArgv, `--${name}`, name);
  const envValue = def.noEnv ? undefined : env[envName(name)];
  if (envValue !== undefined && envValue !== '') return convert(def, envValue, envName(name), name);
  if (def.kind === 'duration' && def.default !== undefined) return convert(def, def.default, '', name);
  return { ok: true, value: def.default };
}

/** Parses argv (strict: unknown flags are errors) with environment fallbacks. */
export function parseFlags<Defs extends FlagDefinitions>(
  defs: Defs,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  opts: { positionals?: boolean } = {},
): Parsed<{ flags: FlagValues<Defs>; positionals: readonly string[] }> {
  let parsed: { values: Record<string, RawValue | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: [...argv],
      options: argOptions(defs),
      strict: true,
      allowPositionals: opts.positionals ?? false,
      allowNegative: true,
    });
  } catch (err) {
    return { ok: false, error: firstLine(err) };
  }
  const flags: Record<string, AnyFlagValue> = {};
  for (const [name, def] of Object.entries(defs)) {
    const value = flagValue(name, def, parsed.values[name], env);
    if (!value.ok) return value;
    flags[name] = value.value;
  }
  // Each value was converted by its own declaration above: this is the one place
  // where the declared types meet the untyped record.
  const typed = Object.freeze(flags) as FlagValues<Defs>;
  return { ok: true, value: { flags: typed, positionals: parsed.positionals } };
}

/** `-h`, `--help`: declared alike by every command that lists it among its flags. */
export const HELP_FLAG = {
  kind: 'boolean',
  short: 'h',
  default: false,
  noEnv: true,
  description: 'Print this help and exit.',
} as const satisfies FlagDefinition;

/** Placeholder of a flag that takes a value: the given name, else its choices (`a|b`), else `VALUE`. */
function valueName(name: string, def: FlagDefinition, names: Readonly<Record<string, string>>): string {
  return names[name] ?? (def.kind === 'string' && def.choices ? def.choices.join('|') : 'VALUE');
}

/**
 * The `--help` lines of a set of flags, one style for every command: the flag on one line, then
 * its description with its default (for a flag that takes a value) and the variable it reads.
 */
function flagList(defs: FlagDefinitions, names: Readonly<Record<string, string>>): string[] {
  const lines: string[] = [];
  for (const [name, def] of Object.entries(defs)) {
    const value = def.kind === 'boolean' ? '' : ` ${valueName(name, def, names)}`;
    const shown = def.default !== undefined && def.kind !== 'boolean';
    const dflt = shown ? ` (default: ${String(def.default)})` : '';
    const env = def.noEnv ? '' : ` [env ${envName(name)}]`;
    const short = def.short ? `-${def.short}, ` : '    ';
    lines.push(`  ${short}--${name}${value}`, `        ${def.description}${dflt}${env}`);
  }
  return lines;
}

/** What a command's `--help` says besides its flags; every command's help has this one shape. */
export interface HelpText {
  /** What follows `routability-webhook NAME` on the usage line; default `[flags]`. */
  readonly usage?: string;
  /** What the command does: lines of one paragraph, or several separated by ''. */
  readonly description: readonly string[];
  /** Command lines that show it in use, under `Examples:`. */
  readonly examples?: readonly string[];
  /** After the flags: the exit statuses, where the docs are. */
  readonly notes?: readonly string[];
  /** Placeholders of flags that take a value, by flag name (default: the choices, else VALUE). */
  readonly valueNames?: Readonly<Record<string, string>>;
}

/**
 * A command's `--help`: the usage line, the description, the examples, the flags (with `-h, --help`
 * whether declared or not: every command answers it) and the notes.
 */
export function commandHelp(command: string, flags: FlagDefinitions, help: HelpText): string {
  const names = help.valueNames ?? {};
  const lines = [`Usage: routability-webhook ${command} ${help.usage ?? '[flags]'}`, '', ...help.description];
  if (help.examples?.length) lines.push('', 'Examples:', ...help.examples.map((e) => `  ${e}`));
  lines.push('', 'Flags:', ...flagList(flags, names));
  if (!('help' in flags)) lines.push(...flagList({ help: HELP_FLAG }, names));
  if (help.notes?.length) lines.push('', ...help.notes);
  return lines.join('\n');
}
