/**
 * `routability-webhook check`: the engine over manifests, for CI pipelines.
 * Thin on purpose: flags → context → inputs → report → format; the work is in src/check/.
 */
import { resolveContext } from '../check/context.js';
import { FORMATTERS } from '../check/format/index.js';
import { inputErrorLine } from '../check/format/text.js';
import { discoverInputs } from '../check/inputs.js';
import { checkHelp, parseCheckOptions } from '../check/options.js';
import { summarize } from '../check/report.js';
import { checkInputs } from '../check/run.js';
import type { CommandIO } from './io.js';
import { EXIT_USAGE, readAll, writeLine } from './io.js';

function usageError(io: CommandIO, message: string, hint = true): number {
  const help = hint ? '\nRun `routability-webhook check --help` for usage.' : '';
  writeLine(io.stderr, `routability-webhook check: ${message}${help}`);
  return EXIT_USAGE;
}

export async function runCheck(argv: readonly string[], io: CommandIO): Promise<number> {
  const options = parseCheckOptions(argv, io.env);
  if (!options.ok) return usageError(io, options.error);
  if (options.value.help) {
    writeLine(io.stdout, checkHelp());
    return 0;
  }
  const resolved = await resolveContext(options.value, io.env);
  if (!resolved.ok) return usageError(io, resolved.error, resolved.usage);

  const inputs = discoverInputs(options.value.filenames, io.cwd);
  const report = await checkInputs(inputs, {
    ctx: resolved.ctx,
    settings: resolved.settings,
    readStdin: () => readAll(io.stdin),
  });
  const summary = summarize(report);
  io.stdout.write(FORMATTERS[options.value.output](report, summary));
  // Machine-readable formats keep stdout parseable; input problems are echoed on stderr too.
  if (options.value.output !== 'text')
    for (const file of report.files)
      for (const error of file.errors) writeLine(io.stderr, inputErrorLine(error));
  return summary.exitCode;
}
