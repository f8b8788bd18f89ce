/**
 * Evaluation: runs the engine on one Gateway object exactly as the cluster
 * would see it — spec as a CREATE, and status (when the manifest carries one)
 * as a status update, with the mutating webhook's defaulting notices.
 */
import { mutateGateway, validateGateway, type Finding, type RuleContext } from '../rules/index.js';
import type { Severity } from './report.js';

export interface Evaluated {
  readonly severity: Severity;
  readonly check: 'spec' | 'status';
  readonly finding: Finding;
}

function hasStatus(object: unknown): boolean {
  if (typeof object !== 'object' || object === null) return false;
  const status = Object.prototype.hasOwnProperty.call(object, 'status')
    ? (object as { status: unknown }).status
    : undefined;
  return status !== undefined && status !== null;
}

export function evaluateGateway(object: unknown, ctx: RuleContext): Evaluated[] {
  const out: Evaluated[] = [];
  const spec = validateGateway({ operation: 'CREATE', subResource: '', object }, ctx);
  for (const finding of spec.violations) out.push({ severity: 'violation', check: 'spec', finding });
  for (const finding of spec.warned) out.push({ severity: 'warning', check: 'spec', finding });
  for (const finding of spec.notices) out.push({ severity: 'warning', check: 'spec', finding });
  if (hasStatus(object)) {
    const request = { operation: 'UPDATE', subResource: 'status', object };
    const status = validateGateway(request, ctx);
    for (const finding of status.violations) out.push({ severity: 'violation', check: 'status', finding });
    for (const finding of status.warned) out.push({ severity: 'warning', check: 'status', finding });
    for (const finding of status.notices) out.push({ severity: 'warning', check: 'status', finding });
    for (const finding of mutateGateway(request, ctx).notices)
      out.push({ severity: 'warning', check: 'status', finding });
  }
  return out;
}
