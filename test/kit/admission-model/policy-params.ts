/**
 * The params of one binding, as
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go
 * CollectParams finds them: a policy without paramKind, or a binding without
 * paramRef, is evaluated once with params null; a namespaced paramKind
 * (ConfigMap) is read from paramRef.namespace, else the request's namespace;
 * paramRef.name gets one object (not found: none), paramRef.selector lists
 * the matching ones (possibly several: the policy is evaluated once per
 * param); with no param found, parameterNotFoundAction Deny is a
 * configuration error ("no params found for policy binding with `Deny`
 * parameterNotFoundAction") and Allow (or unset) skips the binding.
 */
import type { Cluster } from './cluster.js';
import { labelsOf, selectorMatches } from './label-selector.js';
import type { Obj, Write } from './types.js';

export interface ParamRef {
  readonly name?: string;
  readonly namespace?: string;
  readonly selector?: unknown;
  readonly parameterNotFoundAction?: string;
}

export type ParamsOutcome =
  | { readonly kind: 'params'; readonly params: readonly (Obj | null)[] }
  | { readonly kind: 'error'; readonly message: string };

function find(cluster: Cluster, ref: ParamRef, namespace: string): Obj[] {
  if (ref.name !== undefined && ref.name !== '') {
    const cm = cluster.configMap(namespace, ref.name);
    return cm ? [cm] : [];
  }
  const out: Obj[] = [];
  for (const [k, cm] of cluster.configMaps)
    if (k.startsWith(`${namespace}/`) && selectorMatches(ref.selector ?? {}, labelsOf(cm))) out.push(cm);
  return out;
}

export function collectParams(
  paramKind: { apiVersion?: string; kind?: string } | undefined,
  ref: ParamRef | undefined,
  cluster: Cluster,
  write: Write,
): ParamsOutcome {
  if (paramKind === undefined || ref === undefined) return { kind: 'params', params: [null] };
  if (paramKind.apiVersion !== 'v1' || paramKind.kind !== 'ConfigMap')
    return {
      kind: 'error',
      message: `paramKind kind \`${paramKind.apiVersion}, Kind=${paramKind.kind}\` not known`,
    };
  if (ref.name && ref.selector !== undefined)
    return { kind: 'error', message: 'paramRef.name and paramRef.selector are mutually exclusive' };
  if (!ref.name && ref.selector === undefined)
    return { kind: 'error', message: 'one of name or selector must be provided' };
  const namespace = ref.namespace || write.namespace;
  const params = find(cluster, ref, namespace);
  if (params.length === 0 && ref.parameterNotFoundAction === 'Deny')
    return {
      kind: 'error',
      message: 'no params found for policy binding with `Deny` parameterNotFoundAction',
    };
  return { kind: 'params', params };
}
