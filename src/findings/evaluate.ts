/**
 * Evaluation: runs the engine on one Gateway object exactly as the cluster
 * would see it — spec as a CREATE, and status (when the manifest carries one)
 * as a status update, with the mutating webhook's defaulting notices. The
 * object is read once and the three reviews share that reading. `check` and
 * the audit share the result: the Gateway's identity and its judged findings.
 */
import {
  mutateGatewayReview,
  readGateway,
  reviewOf,
  validateGatewayReview,
  type FieldPath,
  type Finding,
  type GatewayIdentity,
  type RuleContext,
  type ValidationResult,
} from '../rules/index.js';

/** `violation`: fails the check (exit 1). `warning`: reported, never fails. */
export type Severity = 'violation' | 'warning';

/** One finding as `check` and the audit report it. */
export interface JudgedFinding {
  readonly severity: Severity;
  /** Which admission the rule ran as: `spec` (a CREATE) or `status` (a status update). */
  readonly check: 'spec' | 'status';
  readonly code: string;
  /** `spec.addresses[1].value`, relative to the Gateway. */
  readonly field: string;
  /** The full Kubernetes field-error sentence, as the apiserver would print it. */
  readonly message: string;
  /** The compact form `kubectl` shows as a `Warning:` line. */
  readonly warning: string;
}

/** A Gateway judged: who it is (from the engine's reading) and its findings in engine order. */
export interface JudgedGateway<F extends JudgedFinding = JudgedFinding> extends GatewayIdentity {
  readonly findings: F[];
}

export function evaluateGateway(object: unknown, ctx: RuleContext): JudgedGateway;
/** `place` adds what the caller knows of where a field is (check: its position in the manifest). */
export function evaluateGateway<P extends object>(
  object: unknown,
  ctx: RuleContext,
  place: (field: FieldPath) => P,
): JudgedGateway<JudgedFinding & P>;
export function evaluateGateway(
  object: unknown,
  ctx: RuleContext,
  place?: (field: FieldPath) => object,
): JudgedGateway {
  const findings: JudgedFinding[] = [];
  const add = (severity: Severity, check: JudgedFinding['check'], f: Finding): void => {
    const judged = {
      severity,
      check,
      code: f.code,
      field: f.field.toString(),
      message: f.message,
      warning: f.warning,
    };
    findings.push(place ? { ...judged, ...place(f.field) } : judged);
  };
  const collect = (check: JudgedFinding['check'], result: ValidationResult) => {
    for (const finding of result.violations) add('violation', check, finding);
    for (const finding of [...result.warned, ...result.notices]) add('warning', check, finding);
  };
  const gateway = readGateway(object);
  collect(
    'spec',
    validateGatewayReview(reviewOf({ operation: 'CREATE', subResource: '', object }, gateway), ctx),
  );
  if (gateway.hasStatus) {
    const review = reviewOf({ operation: 'UPDATE', subResource: 'status', object }, gateway);
    collect('status', validateGatewayReview(review, ctx));
    for (const finding of mutateGatewayReview(review, ctx).notices) add('warning', 'status', finding);
  }
  return { namespace: gateway.namespace, name: gateway.name, uid: gateway.uid, findings };
}
