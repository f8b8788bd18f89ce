/**
 * Which rules a request matches, as kube-apiserver decides it:
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules/rules.go
 * (Matcher.Matches: scope, operation, group, version, resource with its
 * subresource: "gateways" never matches "gateways/status", "gateways/*" and
 * "*\/*" do), and matchPolicy Equivalent from
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/generic/webhook.go
 * (ShouldCallHook: when no rule matches the request's own version, an
 * equivalent resource — the same Gateway in another served version — is
 * tried, and the object is sent converted to that version).
 */
import type { Write } from './types.js';

export const GROUP = 'gateway.networking.k8s.io';
/** The versions the Gateway CRD serves: each is equivalent to the other (one schema, no conversion webhook). */
export const GATEWAY_VERSIONS = ['v1', 'v1beta1'] as const;

export interface Rule {
  readonly apiGroups?: readonly string[];
  readonly apiVersions?: readonly string[];
  readonly operations?: readonly string[];
  readonly resources?: readonly string[];
  readonly scope?: string;
  /** ValidatingAdmissionPolicy resourceRules only. */
  readonly resourceNames?: readonly string[];
}

/** The resource a request is for: group/version/resource, subresource, namespace. */
export interface RequestResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly subResource: string;
  readonly namespace: string;
  readonly operation: string;
}

export function requestResource(write: Write, version: string = write.version ?? 'v1'): RequestResource {
  return {
    group: GROUP,
    version,
    resource: 'gateways',
    subResource: write.subResource ?? '',
    namespace: write.namespace,
    operation: write.operation,
  };
}

const exactOrWildcard = (items: readonly string[] | undefined, requested: string) =>
  (items ?? []).some((i) => i === '*' || i === requested);

function scopeMatches(scope: string | undefined, r: RequestResource): boolean {
  if (scope === undefined || scope === '*') return true;
  // A Gateway is namespaced; rules.go also counts the namespaces resource as cluster-scoped.
  if (scope === 'Namespaced') return r.namespace !== '';
  if (scope === 'Cluster') return r.namespace === '';
  return false;
}

function resourceMatches(resources: readonly string[] | undefined, r: RequestResource): boolean {
  return (resources ?? []).some((entry) => {
    const slash = entry.indexOf('/');
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const sub = slash < 0 ? '' : entry.slice(slash + 1);
    return (res === '*' || res === r.resource) && (sub === '*' || sub === r.subResource);
  });
}

/** rules.go Matcher.Matches for one rule. */
export function ruleMatches(rule: Rule, r: RequestResource): boolean {
  return (
    scopeMatches(rule.scope, r) &&
    ((rule.operations ?? []).includes('*') || (rule.operations ?? []).includes(r.operation)) &&
    exactOrWildcard(rule.apiGroups, r.group) &&
    exactOrWildcard(rule.apiVersions, r.version) &&
    resourceMatches(rule.resources, r)
  );
}

/**
 * The version a hook is invoked with, or undefined when none of its rules
 * match: first the request's own version, then (matchPolicy Equivalent, the
 * API's default) each equivalent version, earlier rules first.
 */
export function matchedVersion(
  rules: readonly Rule[],
  matchPolicy: string | undefined,
  write: Write,
): string | undefined {
  const own = requestResource(write);
  if (rules.some((rule) => ruleMatches(rule, own))) return own.version;
  if ((matchPolicy ?? 'Equivalent') !== 'Equivalent') return undefined;
  for (const rule of rules)
    for (const version of GATEWAY_VERSIONS) {
      if (version === own.version) continue;
      if (ruleMatches(rule, requestResource(write, version))) return version;
    }
  return undefined;
}
