/**
 * What the server writes down about each admission request: the request
 * counter, the duration histogram, the findings counter, and the log: a line
 * at info for each denial, a rate-limited warning for an undecodable body or
 * an answer slower than the apiserver's timeout, and for allowed and patched
 * reviews a count in the review log's summary (and a line only at debug).
 * Fed by the answer (or the reason there was none); it decides nothing about
 * the answer itself.
 */
import type { Logger } from 'pino';
import type { Outcome } from '../admission/outcome.js';
import type { AdmissionRequest } from '../admission/review.js';
import type { GepRevision } from '../rules/index.js';
import type { WebhookName } from '../webhooks/gateway.js';
import { clip } from './log-text.js';
import type { RequestCount, ServerMetrics } from './metrics.js';
import { createReviewLog, type Decision, type ReviewLog } from './review-log.js';

/** The record of one webhook's requests (its duration series is bound once, at start-up). */
export interface ReviewRecorder {
  /**
   * A review answered (HTTP 200). `budgetMs`: the apiserver's `?timeout=`, when it sent one;
   * `revision`: the GEP-5093 revision the rules followed (it can switch while the server runs).
   */
  answered(
    review: AdmissionRequest,
    outcome: Outcome,
    timing: { readonly seconds: number; readonly budgetMs: number | undefined },
    revision?: GepRevision,
  ): void;
  /** A body that is not an AdmissionReview this server can answer (HTTP 400). */
  undecodable(uid: string | undefined, reason: string): void;
  /** Any other request to the webhook's route that ended without a review answer, by HTTP status. */
  failed(status: number): void;
}

/** The request counter's cell of one label set, bound on first use. */
type CellFor = (webhook: WebhookName, operation: string, outcome: string, code: string) => RequestCount;

/** `patched` with an empty patch changed nothing: it is counted and logged as `allowed`. */
function decisionOf(outcome: Outcome): Decision {
  return outcome.kind === 'patched' && outcome.patch.length === 0 ? 'allowed' : outcome.kind;
}

/**
 * Returns the recorder of each webhook; label sets are bound once and reused.
 * `log`: where answered reviews are counted and per-request warnings limited
 * (the app starts its summary timer); by default one without a timer.
 */
export function createReviewRecorders(
  logger: Logger,
  metrics: ServerMetrics,
  log: ReviewLog = createReviewLog(logger),
): (webhook: WebhookName) => ReviewRecorder {
  // Each label set's counter cell is bound once and reused.
  const counted = new Map<string, RequestCount>();
  const cellFor: CellFor = (webhook, operation, outcome, code) => {
    const key = `${webhook} ${operation} ${outcome} ${code}`;
    let cell = counted.get(key);
    if (!cell) {
      cell = metrics.requests({ webhook, operation, outcome, code });
      counted.set(key, cell);
    }
    return cell;
  };
  const recorders = new Map<WebhookName, ReviewRecorder>();
  return (webhook) => {
    let recorder = recorders.get(webhook);
    if (!recorder) {
      recorder = webhookRecorder(webhook, { logger, log }, metrics, cellFor);
      recorders.set(webhook, recorder);
    }
    return recorder;
  };
}

/** The fields of a review's log line (long strings cut). */
function reviewFields(
  webhook: WebhookName,
  review: AdmissionRequest,
  outcome: Outcome,
  said: { decision: Decision; seconds: number; overTimeout: boolean; revision: GepRevision | undefined },
): object {
  return {
    uid: review.uid,
    webhook,
    kind: clip(review.kind.kind),
    version: clip(review.kind.version),
    namespace: clip(review.namespace),
    name: clip(review.name),
    operation: review.operation,
    subResource: clip(review.subResource) || undefined,
    dryRun: review.dryRun || undefined,
    decision: said.decision,
    gepRevision: said.revision,
    codes: outcome.codes.length > 0 ? outcome.codes : undefined,
    durationMs: Math.round(said.seconds * 1e6) / 1e3,
    ...(said.overTimeout ? { overTimeout: true } : {}),
  };
}

function webhookRecorder(
  webhook: WebhookName,
  { logger, log }: { readonly logger: Logger; readonly log: ReviewLog },
  metrics: ServerMetrics,
  cellFor: CellFor,
): ReviewRecorder {
  const duration = metrics.duration.labels({ webhook });
  // The findings counter's cell of each rule code, bound on first use: prom-client hashes a
  // label set on every inc() it is given, but once for a bound cell.
  const violationCells = new Map<string, { inc(): void }>();
  const countFinding = (rule: string) => {
    let cell = violationCells.get(rule);
    if (!cell) violationCells.set(rule, (cell = metrics.violations.labels({ rule })));
    cell.inc();
  };
  const countRequest = (operation: string, outcome: string, code: string) =>
    cellFor(webhook, operation, outcome, code).inc();
  // The cells of answered reviews by operation, then decision: found without building a key string
  // per review (operations are the envelope's four, decisions three).
  const answeredCells = new Map<string, Map<string, RequestCount>>();
  const countAnswered = (operation: string, decision: string) => {
    let byDecision = answeredCells.get(operation);
    if (!byDecision) answeredCells.set(operation, (byDecision = new Map()));
    let cell = byDecision.get(decision);
    if (!cell) byDecision.set(decision, (cell = cellFor(webhook, operation, decision, '200')));
    cell.inc();
  };
  return {
    answered(review, outcome, { seconds, budgetMs }, revision) {
      const decision = decisionOf(outcome);
      countAnswered(review.operation, decision);
      duration.observe(seconds);
      for (const code of outcome.codes) countFinding(code);
      log.count(webhook, decision);
      const overTimeout = budgetMs !== undefined && seconds * 1000 > budgetMs;
      // Allowed and patched reviews are routine: counted (metrics, the summary line), logged at
      // debug. A denial keeps its info line; an answer the apiserver had given up on is a
      // warning, limited like every per-request warning (under overload every answer is late).
      const routine = decision !== 'denied' && !overTimeout;
      if (routine && !logger.isLevelEnabled('debug')) return;
      const fields = reviewFields(webhook, review, outcome, { decision, seconds, overTimeout, revision });
      if (decision === 'denied') logger.info(fields, 'review');
      else if (overTimeout) log.lines.write('slow review', 'warn', fields, 'review');
      else logger.debug(fields, 'review');
    },
    undecodable(uid, reason) {
      log.lines.write(
        'undecodable review',
        'warn',
        { uid, webhook, reason: clip(reason) },
        'undecodable review',
      );
      countRequest('unknown', 'error', '400');
    },
    failed(status) {
      countRequest('unknown', 'error', String(status));
    },
  };
}
