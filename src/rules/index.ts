/**
 * The rule engine's front door: pure functions from a Gateway admission
 * request and a context to a decision. `serve`, `review` and `check` all call
 * these, so a pipeline and the cluster can never disagree. The rest of src/
 * imports the engine through this module only.
 */
import { mutateGatewayReview, type MutationResult } from './defaults.js';
import { reviewOf } from './review.js';
import type { GatewayRequest, RuleContext } from './types.js';
import { validateGatewayReview, type ValidationResult } from './validate.js';

/** Validates a Gateway CREATE/UPDATE (spec rules) or a gateways/status UPDATE (status rules). */
export function validateGateway(request: GatewayRequest, ctx: RuleContext): ValidationResult {
  return validateGatewayReview(reviewOf(request), ctx);
}

/** The defaulting patch for a gateways/status UPDATE; nothing for other requests. */
export function mutateGateway(request: GatewayRequest, ctx: RuleContext): MutationResult {
  return mutateGatewayReview(reviewOf(request), ctx);
}

export { mutateGatewayReview, type JsonPatchOperation, type MutationResult } from './defaults.js';
export {
  validateGatewayReview,
  aggregateMessage,
  MAX_REPORTED_VIOLATIONS,
  type ValidationResult,
} from './validate.js';
export { reviewOf, type GatewayReview } from './review.js';
export {
  GATEWAY_API_GROUP,
  MAX_ADDRESSES,
  gatewayIdentity,
  readGateway,
  type GatewayIdentity,
  type GatewayView,
  type AddressEntry,
  type ConditionView,
} from './gateway.js';
export { FieldPath } from './field-path.js';
export type { ErrorType } from './field-error.js';
export { parseIP, type ParsedIP, type IPFamily } from './ip.js';
export { ServiceRanges, parseCidr, type ServiceRange, type ServiceCidrInput } from './networks.js';
export { CATALOGUE, RULE_CODES, type RuleCode } from './messages.js';
export { ROUTABILITY_PATTERN, ROUTABILITY_MAX_LENGTH, TESTING_PREFIX } from './routability.js';
export { DNS1123_SUBDOMAIN_SOURCE, DOMAIN_PREFIXED, isDns1123Label, isDns1123Subdomain } from './names.js';
export { GEP_REVISIONS, type GepRevision, type GepRevisionSetting } from './revision.js';
export type {
  Finding,
  GatewayRequest,
  RuleContext,
  Enforcement,
  AllocatedIPs,
  IPAddressHolder,
} from './types.js';
