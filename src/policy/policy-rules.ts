/** Every rule of the policy for a setting: the per-entry rules, then RoutabilityMismatch (it reads spec too). */
import { entryRules, type PolicySettings, type RuleCel } from './rules.js';
import { mismatch } from './status-rules.js';

export function policyRules(settings: PolicySettings): RuleCel[] {
  return [...entryRules(settings), mismatch(settings.revision)];
}
