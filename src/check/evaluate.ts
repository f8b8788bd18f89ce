/**
 * Evaluation: runs the engine on one Gateway object exactly as the cluster
 * would see it — spec as a CREATE, and status (when the manifest carries one)
 * as a status update, with the mutating webhook's defaulting notices. The
 * object is read once and the three reviews share that reading.
 */
import {
  mutateGatewayReview,
  readGateway,
  reviewOf,
  validateGatewayReview,
  type Finding,
  type RuleContext,
  type ValidationResult,
} from '../rules/index.js';
import type { Severity } from './report.js';

export interface Evaluated {
  readonly severity: Severity;
  readonly check: 'spec' | 'status';
  readonly finding: Finding;
}

export function evaluateGateway(object: unknown, ctx: RuleContext): Evaluated[] {
  const out: Evaluated[] = [];
  const collect = (check: Evaluated['check'], result: ValidationResult) => {
    for (const finding of result.violations) out.push({ severity: 'violation', check, finding });
    for (const finding of [...result.warned, ...result.notices])
      out.push({ severity: 'warning', check, finding });
  };
  const gateway = readGateway(object);
  collect(
    'spec',
    validateGatewayReview(reviewOf({ operation: 'CREATE', subResource: '', object }, gateway), ctx),
  );
  if (gateway.hasStatus) {
    const review = reviewOf({ operation: 'UPDATE', subResource: 'status', object }, gateway);
    collect('status', validateGatewayReview(review, ctx));
    for (const finding of mutateGatewayReview(review, ctx).notices)
      out.push({ severity: 'warning', check: 'status', finding });
  }
  return out;
}
