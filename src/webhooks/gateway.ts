/**
 * The two Gateway webhooks: admission requests in, Outcomes out. This is the
 * only place that knows both the AdmissionReview protocol and the rules.
 */
import { ALLOWED_UNTOUCHED, type FieldCause, type Outcome } from '../admission/outcome.js';
import type { AdmissionRequest } from '../admission/review.js';
import {
  GATEWAY_API_GROUP,
  MAX_REPORTED_VIOLATIONS,
  mutateGatewayReview,
  reviewOf,
  validateGatewayReview,
  type Finding,
  type GatewayReview,
  type RuleContext,
} from '../rules/index.js';

export type WebhookName = 'validate' | 'mutate';
export type Webhook = (request: AdmissionRequest, ctx: RuleContext) => Outcome;

/** Gateways in v1 or v1beta1 (same schema); with matchPolicy Equivalent both arrive. */
export function isGatewayRequest(request: AdmissionRequest): boolean {
  return request.resource.group === GATEWAY_API_GROUP && request.resource.resource === 'gateways';
}

/** The request with its Gateway objects read once, as the engine reviews them. */
function gatewayReview(request: AdmissionRequest, withOld = true): GatewayReview {
  return reviewOf({
    operation: request.operation,
    subResource: request.subResource,
    namespace: request.namespace,
    name: request.name,
    object: request.object,
    oldObject: withOld ? request.oldObject : undefined,
  });
}

/** A finding as a `details.causes[]` entry: its type is the reason, no text is parsed back. */
function causeOf(f: Finding): FieldCause {
  return { field: f.field.toString(), reason: f.type, message: f.body };
}

const NO_CODES: readonly string[] = Object.freeze([]);

/**
 * The distinct codes of the findings, in the order they first appear. Built
 * without a joined list, a mapped list and a Set per review: a review has a
 * handful of distinct codes however many findings, so the search stays short.
 */
function codesOf(...lists: readonly (readonly Finding[])[]): readonly string[] {
  let codes: string[] | undefined;
  for (const list of lists)
    for (const f of list) {
      codes ??= [];
      if (!codes.includes(f.code)) codes.push(f.code);
    }
  return codes ?? NO_CODES;
}

export const validateReview: Webhook = (request, ctx) => {
  if (!isGatewayRequest(request)) return ALLOWED_UNTOUCHED;
  const result = validateGatewayReview(gatewayReview(request), ctx);
  const codes = codesOf(result.violations, result.warned, result.ratcheted, result.notices);
  const common = { warnings: result.warnings, auditAnnotations: result.auditAnnotations, codes };
  if (result.allowed) return { kind: 'allowed', ...common };
  return {
    kind: 'denied',
    message: result.message,
    causes: result.violations.slice(0, MAX_REPORTED_VIOLATIONS).map(causeOf),
    ...common,
  };
};

export const mutateReview: Webhook = (request, ctx) => {
  if (!isGatewayRequest(request)) return ALLOWED_UNTOUCHED;
  // The defaulting patch depends on the new object only: the stored one is not read.
  const result = mutateGatewayReview(gatewayReview(request, false), ctx);
  const defaulted = result.patch.length;
  return {
    kind: 'patched',
    patch: result.patch,
    warnings: result.warnings,
    auditAnnotations: defaulted > 0 ? { 'defaulted-routability': String(defaulted) } : {},
    codes: codesOf(result.notices),
  };
};

export const WEBHOOKS: Readonly<Record<WebhookName, Webhook>> = {
  validate: validateReview,
  mutate: mutateReview,
};
