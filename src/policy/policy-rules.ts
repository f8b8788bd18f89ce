/** Every rule of the policy for a setting: the per-entry rules, then RoutabilityMismatch and AddressesAssignedInconsistent (they read spec and conditions too). */
import { entryRules, type PolicySettings, type RuleCel } from './cel-rules.js';
import { mismatch } from './status-rules.js';
import { assigned } from './assigned-rule.js';

export function policyRules(settings: PolicySettings): RuleCel[] {
  return [...entryRules(settings), mismatch(settings.revision), assigned(settings.revision)];
}
