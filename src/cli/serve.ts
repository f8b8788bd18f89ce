/** `routability-webhook serve`: parse flags, start, and shut down cleanly on SIGTERM/SIGINT. */
import { helpText, parseServeConfig, SERVE_FLAGS } from '../config.js';
import { createLogger, startServer } from '../main.js';
import { EXIT_OK, EXIT_USAGE, writeLine, type CommandIO } from './io.js';

export async function runServe(argv: readonly string[], io: CommandIO): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    writeLine(
      io.stdout,
      helpText('serve', 'Run the HTTPS admission webhook (POST /validate, /mutate).', SERVE_FLAGS),
    );
    return EXIT_OK;
  }
  const parsed = parseServeConfig(argv, io.env);
  if (!parsed.ok) {
    writeLine(io.stderr, `routability-webhook serve: ${parsed.error}`);
    return EXIT_USAGE;
  }
  const config = parsed.value;
  const logger = createLogger(config);
  let handle;
  try {
    handle = await startServer(config, logger);
  } catch (err) {
    const reason = (err as Error).message.split('\n')[0];
    logger.fatal({ reason }, 'cannot start');
    logger.flush?.();
    writeLine(io.stderr, `routability-webhook serve: cannot start: ${reason}`);
    return EXIT_USAGE;
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal, timeoutSeconds: config.shutdownTimeoutSeconds }, 'shutting down');
      const deadline = setTimeout(() => {
        logger.warn('shutdown timeout reached with requests still in flight; exiting');
        logger.flush?.();
        process.exit(EXIT_OK);
      }, config.shutdownTimeoutSeconds * 1000);
      deadline.unref();
      handle.close().then(
        () => {
          logger.info('stopped');
          logger.flush?.();
          resolve(EXIT_OK);
          // Anything still holding the loop (a watch reconnect, a stray socket) must not keep us past the grace period.
          setTimeout(() => process.exit(EXIT_OK), 500).unref();
        },
        (err: unknown) => {
          logger.error({ err: (err as Error).message }, 'error during shutdown');
          resolve(EXIT_OK);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
