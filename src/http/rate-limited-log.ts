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

/**
 * A token bucket for log lines of one kind: `burst` lines at once, then one
 * more each `refillMs`. A steady flood writes one line per `refillMs`, plus
 * one line saying how many were held back before it.
 */
export interface LineBucket {
  readonly burst: number;
  readonly refillMs: number;
}

/** Per-review warning and error lines: ten at once, then one each 5 s (12 a minute) per kind. */
export const REVIEW_LINE_BUCKET: LineBucket = { burst: 10, refillMs: 5_000 };

export type LimitedLevel = 'warn' | 'error';

/** Log lines of a kind that can come once per request, each kind within its own bucket. */
export interface LimitedLines {
  /** Writes the line if its kind's bucket has a token; otherwise counts it as suppressed. */
  write(kind: string, level: LimitedLevel, fields: object, message: string): void;
  /** Writes the "N lines suppressed" line of every kind that held lines back since its last line. */
  flush(): void;
}

interface KindState {
  tokens: number;
  at: number;
  suppressed: number;
  level: LimitedLevel;
}

export function limitedLines(
  logger: Logger,
  bucket: LineBucket = REVIEW_LINE_BUCKET,
  now: () => number = () => Date.now(),
): LimitedLines {
  const kinds = new Map<string, KindState>();
  const suppressedLine = (kind: string, state: KindState) => {
    logger[state.level]({ kind, suppressed: state.suppressed }, `${state.suppressed} lines suppressed`);
    state.suppressed = 0;
  };
  return {
    write(kind, level, fields, message) {
      const t = now();
      let state = kinds.get(kind);
      if (!state) kinds.set(kind, (state = { tokens: bucket.burst, at: t, suppressed: 0, level }));
      else {
        // A clock that steps back refills nothing.
        state.tokens = Math.min(bucket.burst, state.tokens + Math.max(0, t - state.at) / bucket.refillMs);
        state.at = t;
      }
      if (state.tokens < 1) {
        state.suppressed++;
        return;
      }
      state.tokens -= 1;
      if (state.suppressed > 0) suppressedLine(kind, state);
      logger[level](fields, message);
    },
    flush() {
      for (const [kind, state] of kinds) if (state.suppressed > 0) suppressedLine(kind, state);
    },
  };
}
