/** The audit's judge: the same evaluation `check` runs on a manifest, on a Gateway read from the cluster. */
import type { AllocationPrefetch } from '../cluster/allocation-prefetch.js';
import { evaluateGateway } from '../check/evaluate.js';
import type { RuleContext } from '../rules/index.js';
import type { AuditFinding, JudgeGateway } from './pass.js';

function findingsOf(object: unknown, ctx: RuleContext): AuditFinding[] {
  return evaluateGateway(object, ctx).findings;
}

/**
 * With `allocations` (the server's allocated-IP lookups), a Gateway whose
 * rules ask about an address has it looked up, as the webhook does.
 */
export function judgeWithContext(ctx: RuleContext, allocations?: AllocationPrefetch): JudgeGateway {
  if (!allocations) return (object) => findingsOf(object, ctx);
  return (object) => allocations.decide(ctx, (c) => findingsOf(object, c));
}
