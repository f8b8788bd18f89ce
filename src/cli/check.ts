/**
 * `routability-webhook check`: the engine over manifests, for CI pipelines.
 * Thin on purpose: flags → context → inputs → report → format; the work is in src/check/.
 */
import { resolveContext } from '../check/context.js';
import { FORMATTERS } from '../check/format.js';
import { inputErrorLine } from '../findings/text.js';
import { discoverInputs } from '../check/input-files.js';
import { CHECK_FLAGS, CHECK_HELP, checkOptionsFrom } from '../check/options.js';
import { summarize } from '../check/report.js';
import { checkInputs } from '../check/run.js';
import { readAll, writeLine } from '../io.js';
import { defineCommand, helpHint } from './command.js';

export const command = defineCommand({
  name: 'check',
  summary: 'check Gateway manifests offline (for CI pipelines)',
  flags: CHECK_FLAGS,
  help: CHECK_HELP,
  usageHint: helpHint('check'),
  positionals: { name: 'PATH' },
  options: checkOptionsFrom,
  run: async (options, { io, fail }) => {
    const resolved = await resolveContext(options, io.env);
    if (!resolved.ok) return fail(resolved.error, { hint: resolved.usage });
    // Which revision the cluster's CRD chose matters to the reader, but never to stdout's format.
    if (resolved.revisionNote !== undefined)
      writeLine(
        io.stderr,
        `routability-webhook check: GEP-5093 revision ${resolved.settings.gepRevision}: ${resolved.revisionNote}`,
      );

    const inputs = discoverInputs(options.filenames, io.cwd);
    const report = await checkInputs(inputs, {
      ctx: resolved.ctx,
      settings: resolved.settings,
      allocations: resolved.allocations?.prefetch,
      readStdin: () => readAll(io.stdin),
    });
    await resolved.allocations?.close();
    const summary = summarize(report, options.failOn);
    io.stdout.write(FORMATTERS[options.output](report, summary));
    // Machine-readable formats keep stdout parseable; input problems are echoed on stderr too.
    if (options.output !== 'text')
      for (const file of report.files)
        for (const error of file.errors) writeLine(io.stderr, inputErrorLine(error));
    return summary.exitCode;
  },
});

export const runCheck = command.main;
