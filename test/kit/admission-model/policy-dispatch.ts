/**
 * The ValidatingAdmissionPolicy plugin for one write:
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go
 * Dispatch, with plugin/policy/generic/policy_dispatcher.go for params.
 * For each policy that matches, each of its bindings that matches is
 * evaluated once per param. A configuration error — the policy or binding
 * cannot be matched, or its params cannot be collected (a missing param
 * under parameterNotFoundAction Deny) — refuses the write under the
 * policy's failurePolicy Fail (the default) and is ignored under Ignore,
 * whatever the binding's validationActions. A Deny decision does what the
 * binding's validationActions say: Deny refuses, Warn adds a warning
 * ("Validation failed for ValidatingAdmissionPolicy '…' with binding '…': …"),
 * Audit adds the validation.policy.admission.k8s.io/validation_failure
 * audit annotation. The first denial is the one reported.
 */
import type { Cluster } from './cluster.js';
import { collectParams, type ParamRef } from './policy-params.js';
import { matchResources, type MatchResources } from './policy-match.js';
import { validatePolicy, type Decision, type PolicySpec } from './policy-validate.js';
import { refuse, isObj, type Obj, type Recorder, type Write } from './types.js';

interface BindingSpec {
  readonly policyName?: string;
  readonly paramRef?: ParamRef;
  readonly matchResources?: MatchResources;
  readonly validationActions?: readonly string[];
}

interface Denial {
  readonly message: string;
  readonly reason: string;
}

const specOf = <T>(o: Obj) => (isObj(o['spec']) ? o['spec'] : {}) as T;
const nameOf = (o: Obj) => String((o['metadata'] as { name?: string } | undefined)?.name ?? '');

/** apimachinery's code for a status reason (policy dispatcher reasonToCode). */
function codeOf(reason: string): number {
  const codes: Record<string, number> = {
    Forbidden: 403,
    Invalid: 422,
    RequestEntityTooLarge: 413,
    Unauthorized: 401,
  };
  return codes[reason] ?? 422;
}

function applyActions(
  decisions: readonly Decision[],
  names: { policy: string; binding: string },
  actions: readonly string[],
  rec: Recorder,
): Denial[] {
  const denials: Denial[] = [];
  for (const d of decisions.filter((x) => x.action === 'deny')) {
    const message = `ValidatingAdmissionPolicy '${names.policy}' with binding '${names.binding}' denied request: ${d.message}`;
    if (actions.includes('Deny')) denials.push({ message, reason: d.reason || 'Invalid' });
    if (actions.includes('Warn'))
      rec.warnings.push(
        `Validation failed for ValidatingAdmissionPolicy '${names.policy}' with binding '${names.binding}': ${d.message}`,
      );
    if (actions.includes('Audit'))
      rec.auditAnnotations['validation.policy.admission.k8s.io/validation_failure'] = JSON.stringify([
        {
          message: d.message,
          policy: names.policy,
          binding: names.binding,
          expressionIndex: d.index,
          validationActions: actions,
        },
      ]);
  }
  return denials;
}

function configError(policy: Obj, binding: string | undefined, err: string, rec: Recorder): Denial[] {
  const spec = specOf<PolicySpec>(policy);
  const what = binding === undefined ? 'failed to configure policy' : 'failed to configure binding';
  if ((spec.failurePolicy ?? 'Fail') === 'Ignore') {
    rec.note(`${nameOf(policy)}: ${what} (ignored): ${err}`);
    return [];
  }
  const prefix = binding === undefined ? '' : ` with binding '${binding}'`;
  return [
    {
      message: `ValidatingAdmissionPolicy '${nameOf(policy)}'${prefix} denied request: ${what}: ${err}`,
      reason: 'Invalid',
    },
  ];
}

function evaluateBinding(
  policy: Obj,
  binding: Obj,
  ctx: { cluster: Cluster; write: Write; object: Obj; version: string; rec: Recorder },
): Denial[] {
  const spec = specOf<PolicySpec>(policy);
  const b = specOf<BindingSpec>(binding);
  const objects = { object: ctx.object, ...(ctx.write.oldObject ? { oldObject: ctx.write.oldObject } : {}) };
  const m = matchResources(b.matchResources, ctx.cluster, ctx.write, objects);
  if (m.kind === 'error') return configError(policy, nameOf(binding), m.message, ctx.rec);
  if (m.kind === 'no-match') return [];
  const params = collectParams(spec.paramKind, b.paramRef, ctx.cluster, ctx.write);
  if (params.kind === 'error') return configError(policy, nameOf(binding), params.message, ctx.rec);
  const nsLabels = ctx.cluster.namespaces.get(ctx.write.namespace) ?? {};
  const namespaceObject = { metadata: { name: ctx.write.namespace, labels: nsLabels } };
  const denials: Denial[] = [];
  for (const param of params.params) {
    const inv = {
      write: ctx.write,
      version: ctx.version,
      object: ctx.object,
      ...(ctx.write.oldObject ? { oldObject: ctx.write.oldObject } : {}),
    };
    const decisions = validatePolicy(spec, inv, { params: param, namespaceObject });
    denials.push(
      ...applyActions(
        decisions,
        { policy: nameOf(policy), binding: nameOf(binding) },
        b.validationActions ?? [],
        ctx.rec,
      ),
    );
  }
  ctx.rec.note(
    `${nameOf(policy)}/${nameOf(binding)}: ${params.params.length} param(s), ${denials.length} denial(s)`,
  );
  return denials;
}

/** Throws Refused when a policy denies the write. */
export function validateWithPolicies(cluster: Cluster, write: Write, object: Obj, rec: Recorder): void {
  const denials: Denial[] = [];
  const objects = { object, ...(write.oldObject ? { oldObject: write.oldObject } : {}) };
  for (const policy of cluster.policies.values()) {
    const m = matchResources(specOf<PolicySpec>(policy).matchConstraints, cluster, write, objects);
    if (m.kind === 'error') {
      denials.push(...configError(policy, undefined, m.message, rec));
      continue;
    }
    if (m.kind === 'no-match') continue;
    for (const binding of cluster.bindings.values()) {
      if (specOf<BindingSpec>(binding).policyName !== nameOf(policy)) continue;
      denials.push(...evaluateBinding(policy, binding, { cluster, write, object, version: m.version, rec }));
    }
  }
  const first = denials[0];
  if (first) refuse('ValidatingAdmissionPolicy', codeOf(first.reason), first.reason, first.message);
}
