/**
 * Whether a ValidatingAdmissionPolicy, and then each of its bindings,
 * applies to a write:
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/matching/matching.go
 * (Matches: namespaceSelector, objectSelector, excludeResourceRules first,
 * then resourceRules with resourceNames — none listed matches every name —
 * and matchPolicy, Equivalent unless Exact; no resourceRules matches every
 * resource) on the policy's matchConstraints
 * (plugin/policy/generic/policy_matcher.go DefinitionMatches) and on the
 * binding's matchResources, where a binding without matchResources matches
 * everything its policy matches (policy_matcher.go BindingMatches).
 */
import type { Cluster } from './cluster.js';
import { labelsOf, selectorMatches } from './label-selector.js';
import { requestResource, ruleMatches, GATEWAY_VERSIONS, type Rule } from './rules.js';
import type { Obj, Write } from './types.js';

export interface MatchResources {
  readonly namespaceSelector?: unknown;
  readonly objectSelector?: unknown;
  readonly resourceRules?: readonly Rule[];
  readonly excludeResourceRules?: readonly Rule[];
  readonly matchPolicy?: string;
}

export type PolicyMatch =
  | { readonly kind: 'match'; readonly version: string }
  | { readonly kind: 'no-match' }
  | { readonly kind: 'error'; readonly message: string };

function namedMatch(rules: readonly Rule[], write: Write, version: string): boolean {
  const r = requestResource(write, version);
  return rules.some(
    (rule) =>
      ruleMatches(rule, r) &&
      ((rule.resourceNames ?? []).length === 0 || rule.resourceNames!.includes(write.name)),
  );
}

/** matchesResourceRules: the request's own version, then (Equivalent) the other served versions. */
function rulesVersion(
  rules: readonly Rule[],
  matchPolicy: string | undefined,
  write: Write,
): string | undefined {
  const own = write.version ?? 'v1';
  if (namedMatch(rules, write, own)) return own;
  if ((matchPolicy ?? 'Equivalent') === 'Exact') return undefined;
  return GATEWAY_VERSIONS.find((v) => v !== own && namedMatch(rules, write, v));
}

export function matchResources(
  m: MatchResources | undefined,
  cluster: Cluster,
  write: Write,
  objects: { object: Obj; oldObject?: Obj },
): PolicyMatch {
  const own = write.version ?? 'v1';
  if (m === undefined) return { kind: 'match', version: own };
  const ns = cluster.namespaces.get(write.namespace);
  if (ns !== undefined && !selectorMatches(m.namespaceSelector, ns)) return { kind: 'no-match' };
  const objectOk =
    selectorMatches(m.objectSelector, labelsOf(objects.object)) ||
    (objects.oldObject !== undefined && selectorMatches(m.objectSelector, labelsOf(objects.oldObject)));
  if (!objectOk) return { kind: 'no-match' };
  if (rulesVersion(m.excludeResourceRules ?? [], m.matchPolicy, write) !== undefined)
    return { kind: 'no-match' };
  const version =
    (m.resourceRules ?? []).length === 0 ? own : rulesVersion(m.resourceRules ?? [], m.matchPolicy, write);
  if (version === undefined) return { kind: 'no-match' };
  if (ns === undefined) return { kind: 'error', message: `namespaces "${write.namespace}" not found` };
  return { kind: 'match', version };
}
