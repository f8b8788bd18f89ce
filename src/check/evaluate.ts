/**
 * Evaluation: runs the engine on one Gateway object exactly as the cluster
 * would see it — spec as a CREATE, and status (when the manifest carries one)
 * as a status update, with the mutating webhook's defaulting notices.
 */
import {
  mutateGateway,
  validateGateway,
  type Finding,
  type RuleContext,
  type ValidationResult,
} from '../rules/index.js';
import { asRecord, own } from '../rules/types.js';
import type { Severity } from './report.js';

export interface Evaluated {
  readonly severity: Severity;
  readonly check: 'spec' | 'status';
  readonly finding: Finding;
}

function hasStatus(object: unknown): boolean {
  const status = own(asRecord(object), 'status');
  return status !== undefined && status !== null;
}

export function evaluateGateway(object: unknown, ctx: RuleContext): Evaluated[] {
  const out: Evaluated[] = [];
  const collect = (check: Evaluated['check'], result: ValidationResult) => {
    for (const finding of result.violations) out.push({ severity: 'violation', check, finding });
    for (const finding of [...result.warned, ...result.notices])
      out.push({ severity: 'warning', check, finding });
  };
  collect('spec', validateGateway({ operation: 'CREATE', subResource: '', object }, ctx));
  if (hasStatus(object)) {
    const request = { operation: 'UPDATE', subResource: 'status', object };
    collect('status', validateGateway(request, ctx));
    for (const finding of mutateGateway(request, ctx).notices)
      out.push({ severity: 'warning', check: 'status', finding });
  }
  return out;
}
