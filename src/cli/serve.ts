/** `routability-webhook serve`: parse flags, start, and shut down cleanly on SIGTERM/SIGINT. */
import type { Logger } from 'pino';
import { SERVE_FLAGS, serveConfigFrom, type ServeConfig } from '../config/serve.js';
import { errorMessage, firstLine } from '../error-text.js';
import { EXIT_OK, type EXIT_USAGE } from '../io.js';
import type { ServerHandle } from '../server/assemble.js';
import { defineCommand } from './command.js';

export const command = defineCommand({
  name: 'serve',
  summary: 'run the HTTPS admission webhook',
  flags: SERVE_FLAGS,
  help: { description: ['Run the HTTPS admission webhook (POST /validate, /mutate).'] },
  options: serveConfigFrom,
  run: async (config, { fail }) => {
    // The server (Fastify, pino, prom-client) is loaded only once serve's flags are known good.
    const [{ createLogger }, { startServer }] = await Promise.all([
      import('../server/logger.js'),
      import('../server/assemble.js'),
    ]);
    const logger = createLogger(config);
    let handle: ServerHandle;
    try {
      handle = await startServer(config, logger);
    } catch (err) {
      return cannotStart(err, logger, fail);
    }
    return untilSignalled(handle, config, logger);
  },
});

function cannotStart(err: unknown, logger: Logger, fail: (message: string) => typeof EXIT_USAGE): number {
  const reason = firstLine(err);
  logger.fatal({ reason }, 'cannot start');
  logger.flush?.();
  return fail(`cannot start: ${reason}`);
}

/** Serves until SIGTERM or SIGINT, then closes within the shutdown timeout. */
function untilSignalled(
  handle: ServerHandle,
  config: Pick<ServeConfig, 'shutdownTimeoutSeconds'>,
  logger: Logger,
): Promise<number> {
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
          logger.error({ err: errorMessage(err) }, 'error during shutdown');
          resolve(EXIT_OK);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
