/**
 * A ValidatingAdmissionPolicy evaluated as the API server does it, on the
 * real CEL evaluator with Kubernetes' libraries (kube-cel.ts): the request
 * is matched against matchConstraints, the variables are evaluated in order
 * (each sees the ones before it as `variables`), then every validation; a
 * false validation is a failure with its messageExpression (or, when that
 * is not a usable string, its message); an evaluation error is an error,
 * which failurePolicy Fail turns into a denial.
 */
import type { GeneratedPolicy, PolicySettings } from '../../src/policy/index.js';
import type { GatewayRequest } from '../../src/rules/index.js';
import { evalKubeCel } from './kube-cel.js';

/** The parts of an admission request a policy reads: the engine's request shape. */
export type AdmissionInput = GatewayRequest;

/** The policy settings the generator tests vary one field at a time. */
export const BASE_POLICY_SETTINGS: PolicySettings = {
  revision: 'provisional',
  specPolicy: 'enforce',
  statusPolicy: 'warn',
  clusterDomain: 'cluster.local',
  allowedRoutability: new Set(['example.com/CorpWan']),
};

export interface Failure {
  /** Index of the validation in the policy. */
  readonly index: number;
  readonly message: string;
}

export interface PolicyVerdict {
  readonly matched: boolean;
  readonly failures: readonly Failure[];
  /** Validations (or a referenced variable) that failed to evaluate. */
  readonly errors: readonly string[];
  /** Variables that failed to evaluate (an error only where read). */
  readonly variableErrors: readonly string[];
}

/** The apiserver prunes null fields of a custom resource that are not nullable. */
export function pruneNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pruneNulls);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = pruneNulls(v);
    return out;
  }
  return value;
}

interface Spec {
  matchConstraints: {
    resourceRules: { operations: string[]; resources: string[] }[];
  };
  variables: { name: string; expression: string }[];
  validations: { expression: string; message: string; messageExpression?: string }[];
}

function matches(spec: Spec, input: AdmissionInput): boolean {
  const resource = input.subResource ? `gateways/${input.subResource}` : 'gateways';
  return spec.matchConstraints.resourceRules.some(
    (r) => r.operations.includes(input.operation) && r.resources.includes(resource),
  );
}

/** The admission request as CEL sees it: an empty subResource is omitted (omitempty). */
function requestOf(input: AdmissionInput) {
  return {
    operation: input.operation,
    ...(input.subResource ? { subResource: input.subResource } : {}),
    namespace: input.namespace ?? '',
    name: input.name ?? '',
  };
}

const usable = (m: unknown): m is string => typeof m === 'string' && m !== '' && !m.includes('\n');

export function evaluatePolicy(
  generated: GeneratedPolicy,
  input: AdmissionInput,
  params: unknown,
): PolicyVerdict {
  const spec = (generated.policy as { spec: Spec }).spec;
  if (!matches(spec, input)) return { matched: false, failures: [], errors: [], variableErrors: [] };
  const variables: Record<string, unknown> = {};
  const bindings = {
    object: pruneNulls(input.object),
    oldObject: input.oldObject === undefined ? null : pruneNulls(input.oldObject),
    request: requestOf(input),
    params,
    variables,
  };
  // Kubernetes evaluates variables lazily; one that fails is an error only where it is read, so
  // it is left out here and reading it fails as "no such key".
  const variableErrors: string[] = [];
  for (const v of spec.variables) {
    const out = evalKubeCel(v.expression, bindings);
    if (out.ok) variables[v.name] = out.value;
    else variableErrors.push(`${v.name}: ${out.error}`);
  }
  const failures: Failure[] = [];
  const errors: string[] = [];
  spec.validations.forEach((validation, index) => {
    const out = evalKubeCel(validation.expression, bindings);
    if (!out.ok) {
      errors.push(`validation ${index}: ${out.error}`);
      return;
    }
    if (out.value === true) return;
    const m = validation.messageExpression ? evalKubeCel(validation.messageExpression, bindings) : undefined;
    if (m && !m.ok) errors.push(`messageExpression ${index}: ${m.error}`);
    failures.push({ index, message: m?.ok && usable(m.value) ? m.value : validation.message });
  });
  return { matched: true, failures, errors, variableErrors };
}
