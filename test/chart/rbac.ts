// What a process asked the API server for, as RBAC sees it, and whether the chart's Roles allow exactly
// that: every request allowed, every rule used, and a rule limited by name wherever the API allows it.
import type { RequestRecord } from '../kit/fake-apiserver.js';
import type { K8sObject } from './helm.js';

/** One request as the API server's authoriser sees it. */
export interface Access {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
  /** The object's namespace; undefined for cluster-scoped objects and all-namespace lists. */
  readonly namespace: string | undefined;
  /** The object named by the path, or by a `metadata.name` field selector of a list or watch. */
  readonly name: string | undefined;
}

const RESOURCE_PATH =
  /^\/(?:api\/(?<coreVersion>v1)|apis\/(?<group>[^/]+)\/(?<version>[^/]+))(?:\/namespaces\/(?<namespace>[^/]+))?\/(?<resource>[^/]+)(?:\/(?<name>[^/]+))?(?:\/(?<sub>[^/]+))?$/;

/** The access a recorded request needs; undefined for discovery and other non-resource paths. */
export function accessOf(request: Pick<RequestRecord, 'method' | 'path' | 'query'>): Access | undefined {
  const m = RESOURCE_PATH.exec(request.path);
  if (!m?.groups) return undefined;
  const g = m.groups;
  const named = g['name'] !== undefined ? decodeURIComponent(g['name']) : undefined;
  const selected = /^metadata\.name==?(.+)$/.exec(request.query['fieldSelector'] ?? '')?.[1];
  const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };
  let verb = verbs[request.method];
  if (request.method === 'GET') verb = request.query['watch'] === 'true' ? 'watch' : named ? 'get' : 'list';
  if (request.method === 'DELETE') verb = named ? 'delete' : 'deletecollection';
  return {
    group: g['coreVersion'] ? '' : g['group']!,
    resource: g['sub'] ? `${g['resource']}/${g['sub']}` : g['resource']!,
    verb: verb ?? request.method.toLowerCase(),
    namespace: g['namespace'],
    name: request.method === 'POST' ? undefined : (named ?? selected),
  };
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** One rule of one Role or ClusterRole, with where it applies. */
export interface Grant {
  readonly role: string;
  /** A Role's namespace; undefined for a ClusterRole (every namespace). */
  readonly namespace: string | undefined;
  readonly rule: Rule;
}

/** The rules bound to one ServiceAccount by the rendered RoleBindings and ClusterRoleBindings. */
export function grantsOf(docs: K8sObject[], serviceAccount: string, namespace: string): Grant[] {
  const grants: Grant[] = [];
  for (const binding of docs.filter((d) => d.kind === 'RoleBinding' || d.kind === 'ClusterRoleBinding')) {
    const subjects = (binding['subjects'] ?? []) as { kind: string; name: string; namespace?: string }[];
    if (
      !subjects.some(
        (s) => s.kind === 'ServiceAccount' && s.name === serviceAccount && s.namespace === namespace,
      )
    )
      continue;
    const ref = binding['roleRef'] as { kind: string; name: string };
    const role = docs.find((d) => d.kind === ref.kind && d.metadata.name === ref.name);
    if (!role)
      throw new Error(`${binding.kind} ${binding.metadata.name} binds ${ref.kind} ${ref.name}, not rendered`);
    // A RoleBinding grants in its own namespace, even for a ClusterRole.
    const where = binding.kind === 'RoleBinding' ? binding.metadata.namespace : undefined;
    for (const rule of role['rules'] as Rule[])
      grants.push({ role: `${role.kind} ${role.metadata.name}`, namespace: where, rule });
  }
  return grants;
}

function allows(grant: Grant, access: Access): boolean {
  const { rule } = grant;
  if (grant.namespace !== undefined && grant.namespace !== access.namespace) return false;
  if (!rule.apiGroups.includes(access.group) || !rule.resources.includes(access.resource)) return false;
  if (!rule.verbs.includes(access.verb)) return false;
  if (!rule.resourceNames?.length) return true;
  return access.name !== undefined && rule.resourceNames.includes(access.name);
}

export const describeAccess = (a: Access): string =>
  `${a.verb} ${a.resource}${a.group ? `.${a.group}` : ''}${a.namespace ? ` in ${a.namespace}` : ''}${
    a.name ? ` named ${a.name}` : ''
  }`;

/** Each (group, resource, verb, name) a rule grants, as one line. */
function atomsOf(
  grant: Grant,
): { text: string; group: string; resource: string; verb: string; name?: string }[] {
  const { rule } = grant;
  return rule.apiGroups.flatMap((group) =>
    rule.resources.flatMap((resource) =>
      rule.verbs.flatMap((verb) =>
        (rule.resourceNames?.length ? rule.resourceNames : [undefined]).map((name) => ({
          text: `${grant.role}: ${verb} ${resource}${group ? `.${group}` : ''}${name ? ` named ${name}` : ''}`,
          group,
          resource,
          verb,
          ...(name ? { name } : {}),
        })),
      ),
    ),
  );
}

export interface Comparison {
  /** Requests no rendered rule allows (the process would get 403). */
  readonly denied: string[];
  /** Grants no request used (more than the code needs). */
  readonly unused: string[];
  /** Grants of any name where every request named its object (RBAC could limit them by name). */
  readonly unnamed: string[];
}

/**
 * `anyName`: `verb resource.group` accesses whose names are data (an IPAddress named by the address
 * under review), so a rule for them cannot list names.
 */
export function compare(
  accesses: readonly Access[],
  grants: readonly Grant[],
  anyName: readonly string[],
): Comparison {
  const denied = [
    ...new Set(accesses.filter((a) => !grants.some((g) => allows(g, a))).map(describeAccess)),
  ].sort();
  const unused: string[] = [];
  const unnamed: string[] = [];
  for (const grant of grants)
    for (const atom of atomsOf(grant)) {
      const using = accesses.filter(
        (a) =>
          allows(grant, a) &&
          a.group === atom.group &&
          a.resource === atom.resource &&
          a.verb === atom.verb &&
          (atom.name === undefined || a.name === atom.name),
      );
      if (using.length === 0) unused.push(atom.text);
      const key = `${atom.verb} ${atom.resource}${atom.group ? `.${atom.group}` : ''}`;
      if (
        atom.name === undefined &&
        using.length > 0 &&
        using.every((a) => a.name !== undefined) &&
        !anyName.includes(key)
      )
        unnamed.push(
          `${atom.text} (every request named ${[...new Set(using.map((a) => a.name))].join(', ')})`,
        );
    }
  return { denied, unused: [...new Set(unused)].sort(), unnamed: [...new Set(unnamed)].sort() };
}
