/**
 * Warnings for caps being hit, at most one line per key and interval: an attack
 * that trips a cap ten thousand times a second must not turn into ten thousand
 * log lines a second. Each line says how many were suppressed since the last.
 */
import type { Logger } from 'pino';

export type CapWarning = (key: string, fields: Record<string, unknown>, message: string) => void;

export function rateLimitedWarn(logger: Logger, intervalMs = 10_000, now = () => Date.now()): CapWarning {
  const last = new Map<string, { at: number; suppressed: number }>();
  return (key, fields, message) => {
    const t = now();
    const seen = last.get(key);
    if (seen && t - seen.at < intervalMs) {
      seen.suppressed++;
      return;
    }
    logger.warn({ ...fields, ...(seen?.suppressed ? { suppressed: seen.suppressed } : {}) }, message);
    last.set(key, { at: t, suppressed: 0 });
  };
}
