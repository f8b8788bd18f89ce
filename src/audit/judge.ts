/**
 * The audit's judge: the same evaluation `check` runs on a manifest, on a Gateway read from the
 * cluster. It hands back who the Gateway is with its findings, so the pass reads the identity once.
 */
import type { AllocationPrefetch } from '../inputs/allocations/allocation-prefetch.js';
import { evaluateGateway } from '../findings/evaluate.js';
import type { RuleContext } from '../rules/index.js';
import type { JudgeGateway } from './pass.js';

/**
 * With `allocations` (the server's allocated-IP lookups), a Gateway whose
 * rules ask about an address has it looked up, as the webhook does.
 */
export function judgeWithContext(ctx: RuleContext, allocations?: AllocationPrefetch): JudgeGateway {
  if (!allocations) return (object) => evaluateGateway(object, ctx);
  return (object) => allocations.decide(ctx, (c) => evaluateGateway(object, c));
}
