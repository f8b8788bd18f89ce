/**
 * One evaluation of a ValidatingAdmissionPolicy with one param, as
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/validator.go
 * Validate does it: the policy's matchConditions first (an error becomes a
 * decision under failurePolicy), then `variables` in order (each sees the
 * ones before it; one that fails is an error only where it is read —
 * plugin/cel/composition.go evaluates them lazily), then every validation:
 * true admits; false denies with the messageExpression's string (trimmed;
 * not used when it is empty, has a newline, is over 5 KiB or fails), else
 * `message`, else "failed expression: …", and the validation's reason
 * (Invalid unless set); an evaluation error is a Deny decision under
 * failurePolicy Fail and an Admit under Ignore. What a Deny decision then
 * does is the binding's validationActions (policy-dispatch.ts).
 */
import { evalKubeCel } from '../kube-cel.js';
import { evaluateMatchConditions, type MatchCondition } from './match-conditions.js';
import type { MatchResources } from './policy-match.js';
import { celBindings, type Invocation } from './request.js';

export interface PolicySpec {
  readonly failurePolicy?: string;
  readonly paramKind?: { apiVersion?: string; kind?: string };
  readonly matchConstraints?: MatchResources;
  readonly matchConditions?: readonly MatchCondition[];
  readonly variables?: readonly { name: string; expression: string }[];
  readonly validations?: readonly {
    expression: string;
    message?: string;
    messageExpression?: string;
    reason?: string;
  }[];
}

export interface Decision {
  readonly action: 'admit' | 'deny';
  readonly message: string;
  readonly reason: string;
  readonly evaluationError: boolean;
  readonly index: number;
}

/** apiserver pkg/apis/cel MaxEvaluatedMessageExpressionSizeBytes. */
const MAX_MESSAGE_BYTES = 5 * 1024;

function messageOf(
  v: NonNullable<PolicySpec['validations']>[number],
  bindings: Record<string, unknown>,
): string {
  if (v.messageExpression) {
    const out = evalKubeCel(v.messageExpression, bindings);
    if (out.ok && typeof out.value === 'string') {
      const m = out.value.trim();
      if (m !== '' && !m.includes('\n') && Buffer.byteLength(m) <= MAX_MESSAGE_BYTES) return m;
    }
  }
  if (v.message && v.message.trim() !== '') return v.message.trim();
  return `failed expression: ${v.expression.trim()}`;
}

function variablesOf(spec: PolicySpec, bindings: Record<string, unknown>): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  const scope = { ...bindings, variables };
  for (const v of spec.variables ?? []) {
    const out = evalKubeCel(v.expression, scope);
    if (out.ok) variables[v.name] = out.value;
  }
  return variables;
}

export function validatePolicy(
  spec: PolicySpec,
  inv: Invocation,
  extra: { params: unknown; namespaceObject: unknown },
): Decision[] {
  const failAction = (spec.failurePolicy ?? 'Fail') === 'Ignore' ? 'admit' : 'deny';
  const base = celBindings(inv, extra);
  const matched = evaluateMatchConditions(spec.matchConditions, base, spec.failurePolicy);
  if (matched.kind === 'error')
    return [{ action: failAction, message: matched.message, reason: '', evaluationError: true, index: -1 }];
  if (matched.kind === 'skip') return [];
  const bindings = { ...base, variables: variablesOf(spec, base) };
  return (spec.validations ?? []).map((v, index): Decision => {
    const out = evalKubeCel(v.expression, bindings);
    if (!out.ok) return { action: failAction, message: out.error, reason: '', evaluationError: true, index };
    if (out.value === true)
      return { action: 'admit', message: '', reason: '', evaluationError: false, index };
    return {
      action: 'deny',
      message: messageOf(v, bindings),
      reason: v.reason ?? 'Invalid',
      evaluationError: false,
      index,
    };
  });
}
