/**
 * What the log says about answered reviews, so that it does not grow with
 * routine traffic. An allowed or patched review writes no line of its own at
 * `info` (its `debug` line is written only at that level): it is counted, and
 * a summary line every minute gives the counts since the last one, when there
 * were any. Denials keep their own line; a warning or error that can come once
 * per request goes through a token bucket per kind, so a flood of them writes
 * a few lines and a count of those held back, never one line per request.
 */
import type { Logger } from 'pino';
import type { WebhookName } from '../webhooks/gateway.js';
import { limitedLines, REVIEW_LINE_BUCKET, type LimitedLines, type LineBucket } from './rate-limited-log.js';

/** What a review was answered with, as the request counter says it. */
export type Decision = 'allowed' | 'denied' | 'patched';

export interface ReviewLogOptions {
  /** Between two summary lines; 0 writes none (the counts are still kept). */
  readonly summaryEveryMs?: number;
  /** The bucket of each kind of per-request warning or error line. */
  readonly bucket?: LineBucket;
  /** The clock of the buckets (tests). */
  readonly now?: () => number;
}

/** Once a minute: a review log grows by at most one summary line a minute with routine traffic. */
export const SUMMARY_EVERY_MS = 60_000;

export interface ReviewLog {
  /** Per-request warning and error lines, each kind within its bucket. */
  readonly lines: LimitedLines;
  /** Counts an answered review for the next summary line. */
  count(webhook: WebhookName, decision: Decision): void;
  /**
   * Writes the summary line when a review was counted since the last one,
   * and the suppressed counts of the limited lines.
   */
  summarise(): void;
  /** Starts the summary timer (unref'd: it never keeps the process alive). */
  start(): void;
  /** Stops the timer and writes the last summary. */
  stop(): void;
}

type Counts = Record<Decision, number>;
const zero = (): Counts => ({ allowed: 0, denied: 0, patched: 0 });

/** The non-zero counts of one webhook, or undefined when it answered nothing. */
function nonZero(counts: Counts): Partial<Counts> | undefined {
  const out: Partial<Counts> = {};
  let any = false;
  for (const decision of ['allowed', 'denied', 'patched'] as const)
    if (counts[decision] > 0) {
      out[decision] = counts[decision];
      any = true;
    }
  return any ? out : undefined;
}

export function createReviewLog(logger: Logger, options: ReviewLogOptions = {}): ReviewLog {
  const everyMs = options.summaryEveryMs ?? SUMMARY_EVERY_MS;
  const now = options.now ?? (() => Date.now());
  const lines = limitedLines(logger, options.bucket ?? REVIEW_LINE_BUCKET, now);
  let counts: Record<WebhookName, Counts> = { validate: zero(), mutate: zero() };
  let since = now();
  let timer: NodeJS.Timeout | undefined;
  const summarise = () => {
    lines.flush();
    const validate = nonZero(counts.validate);
    const mutate = nonZero(counts.mutate);
    const t = now();
    if (validate || mutate)
      logger.info(
        {
          seconds: Math.round((t - since) / 1000),
          reviews: { ...(validate && { validate }), ...(mutate && { mutate }) },
        },
        'reviews since the last summary',
      );
    counts = { validate: zero(), mutate: zero() };
    since = t;
  };
  return {
    lines,
    count(webhook, decision) {
      counts[webhook][decision]++;
    },
    summarise,
    start() {
      if (timer || everyMs <= 0) return;
      timer = setInterval(summarise, everyMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      summarise();
    },
  };
}
