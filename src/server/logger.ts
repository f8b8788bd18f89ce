/** The server's logger: JSON lines on stdout, or readable lines with --dev. */
import pino, { type Logger } from 'pino';
import type { ServeConfig } from '../config/serve.js';

export function createLogger(config: Pick<ServeConfig, 'logLevel' | 'dev'>): Logger {
  const options = { level: config.logLevel, base: { app: 'routability-webhook' } };
  if (config.dev)
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss' } },
    });
  // Synchronous writes on the main thread, on purpose. pino's default destination
  // hands each line to libuv's thread pool (a pool-thread write plus an eventfd
  // wake-up per review); batching (minLength) held start-up lines back and gained
  // nothing measurable (docs/dev/benchmarks.md). Sync, a line never trails its answer.
  return pino(options, pino.destination({ dest: 1, sync: true }));
}
