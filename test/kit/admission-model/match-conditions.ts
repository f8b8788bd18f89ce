/**
 * matchConditions on a real CEL evaluator, as
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions/matcher.go
 * decides them (for webhooks and, reused by validator.go, for policies):
 * any condition false → the hook is skipped, even if another one errored;
 * otherwise an error (a mix of true and errors) follows failurePolicy:
 * Fail → the request is refused without calling the hook (generic/webhook.go
 * ShouldCallHook returns Forbidden), Ignore → the hook is skipped.
 */
import { evalKubeCel } from '../kube-cel.js';

export interface MatchCondition {
  readonly name: string;
  readonly expression: string;
}

export type MatchOutcome =
  | { readonly kind: 'match' }
  | { readonly kind: 'skip'; readonly failedCondition?: string }
  | { readonly kind: 'error'; readonly message: string };

export function evaluateMatchConditions(
  conditions: readonly MatchCondition[] | undefined,
  bindings: Record<string, unknown>,
  failurePolicy: string | undefined,
): MatchOutcome {
  const errors: string[] = [];
  for (const c of conditions ?? []) {
    const out = evalKubeCel(c.expression, bindings);
    if (!out.ok) {
      errors.push(`${c.name}: ${out.error}`);
      continue;
    }
    if (out.value === false) return { kind: 'skip', failedCondition: c.name };
    if (out.value !== true)
      errors.push(`${c.name}: expression must evaluate to bool, got ${String(out.value)}`);
  }
  if (errors.length === 0) return { kind: 'match' };
  // The API server defaults failurePolicy to Fail.
  if ((failurePolicy ?? 'Fail') === 'Ignore') return { kind: 'skip' };
  return { kind: 'error', message: errors.join(', ') };
}
