/**
 * The ValidatingAdmissionPolicy generator: from the rule settings to the
 * admissionregistration.k8s.io/v1 objects that enforce the engine's static
 * rules inside the API server (Kubernetes ≥ 1.31 for the CEL IP and CIDR
 * libraries). Pure: settings in, plain objects out.
 *
 * The rules run over one list per request (spec on CREATE/UPDATE of
 * gateways, status on UPDATE of gateways/status), skip entries that are
 * unchanged from the stored object as the engine ratchets them, and name the
 * first offending entry's field in the catalogue's words. Findings that deny
 * under every policy and findings of an `enforce` list go to the policy whose
 * binding says Deny; those of a `warn` list to the one whose binding says Warn
 * and Audit. The service ranges come from the params ConfigMap, never from
 * literals, so a ServiceCIDR change needs no new policy.
 */
import { GATEWAY_API_GROUP, type RuleCode, type ServiceRanges } from '../rules/index.js';
import { INDEXES } from './indexes.js';
import { STATUS_REQUEST } from './status-rules.js';
import { policyRules } from './policy-rules.js';
import { entryKey, RANGES, type ListName, type PolicySettings, type RuleCel } from './cel-rules.js';

export { OUT_OF_SCOPE, type PolicySettings } from './cel-rules.js';

/** Where the objects live and what they are called. */
export interface PolicyNames {
  /** Prefix of the policies and bindings: `<name>-deny`, `<name>-warn`. */
  readonly name: string;
  /** The params ConfigMap. */
  readonly paramsName: string;
  readonly paramsNamespace: string;
}

export const DEFAULT_POLICY_NAMES: PolicyNames = {
  name: 'gateway-routability',
  paramsName: 'gateway-routability-params',
  paramsNamespace: 'gateway-routability-webhook',
};

/** The params ConfigMap's keys: comma-separated canonical CIDRs. */
export const PARAMS_KEYS = { serviceCIDRs: 'serviceCIDRs', terminatingCIDRs: 'terminatingCIDRs' } as const;

export type PolicyAction = 'deny' | 'warn';
type JsonObject = Record<string, unknown>;

export interface GeneratedPolicy {
  readonly action: PolicyAction;
  readonly policy: JsonObject;
  readonly binding: JsonObject;
  /** The rule each of the policy's validations stands for, in order. */
  readonly rules: readonly { readonly code: RuleCode; readonly list: ListName }[];
}

/** The variables every policy shares: the lists under review, the stored ones' keys, and the ranges. */
export function baseVariables(revision: PolicySettings['revision']): { name: string; expression: string }[] {
  const cidrs = (key: string) =>
    `params != null && has(params.data) && ${JSON.stringify(key).replace(/"/g, "'")} in params.data ? ` +
    `params.data.${key}.split(',').map(c, c.trim()).filter(c, isCIDR(c)) : []`;
  return [
    {
      name: 'spec',
      expression: `!${STATUS_REQUEST} && has(object.spec) && has(object.spec.addresses) ? object.spec.addresses : []`,
    },
    {
      name: 'status',
      expression: `${STATUS_REQUEST} && request.operation == 'UPDATE' && has(object.status) && has(object.status.addresses) ? object.status.addresses : []`,
    },
    {
      name: 'oldSpec',
      expression: `!${STATUS_REQUEST} && request.operation == 'UPDATE' && oldObject != null && has(oldObject.spec) && has(oldObject.spec.addresses) ? oldObject.spec.addresses : []`,
    },
    {
      name: 'oldStatus',
      expression: `${STATUS_REQUEST} && oldObject != null && has(oldObject.status) && has(oldObject.status.addresses) ? oldObject.status.addresses : []`,
    },
    { name: 'oldSpecKeys', expression: `variables.oldSpec.map(o, ${entryKey('o', 'spec', revision)})` },
    { name: 'oldStatusKeys', expression: `variables.oldStatus.map(o, ${entryKey('o', 'status', revision)})` },
    { name: 'serviceCIDRs', expression: cidrs(PARAMS_KEYS.serviceCIDRs) },
    { name: 'terminatingCIDRs', expression: cidrs(PARAMS_KEYS.terminatingCIDRs) },
    { name: 'usableCIDRs', expression: `${RANGES.all}.filter(c, !(c in variables.terminatingCIDRs))` },
  ];
}

/** `specClusterAddressOutsideServiceRange`: the variable holding one rule's per-entry findings. */
const variableName = (rule: RuleCel) => `${rule.list}${rule.code}`;
const oldKeys = (list: ListName) => (list === 'spec' ? 'variables.oldSpecKeys' : 'variables.oldStatusKeys');

export function ruleVariables(rule: RuleCel, revision: PolicySettings['revision']) {
  const own = rule.variables ?? [];
  if (rule.whole) return [...own];
  const name = variableName(rule);
  const unchanged = `(${entryKey('a', rule.list, revision)} in ${oldKeys(rule.list)})`;
  return [
    ...own,
    {
      name,
      expression: rule.byIndex
        ? `${INDEXES}.filter(i, i < size(variables.${rule.list})).map(i, [variables.${rule.list}[i]].exists(a, ${rule.predicate} && !${unchanged}))`
        : `variables.${rule.list}.map(a, ${rule.predicate} && !${unchanged})`,
    },
    {
      name: `${name}At`,
      expression: `${INDEXES}.filter(i, i < size(variables.${name}) && variables.${name}[i])[0]`,
    },
  ];
}

export function validation(rule: RuleCel) {
  if (rule.whole) return { ...rule.whole, reason: 'Invalid' };
  const name = variableName(rule);
  const at = `variables.${name}At`;
  const entry = `variables.${rule.list}[${at}]`;
  const field = `'${rule.list}.addresses[' + string(${at}) + '].${rule.field}'`;
  const { expression, fallback } = rule.message(entry, field, at);
  return {
    expression: `!variables.${name}.exists(found, found)`,
    message: `${rule.list}.${fallback}`,
    messageExpression: expression,
    reason: 'Invalid',
  };
}

/**
 * Which policy a rule's findings belong to under the settings. Invalid values
 * deny wherever a list is enforced; under warn on both lists nothing denies
 * (no `-deny` policy at all), so a warn-first rollout refuses no write.
 */
export function actionOf(rule: RuleCel, settings: PolicySettings): PolicyAction {
  if (settings.specPolicy === 'warn' && settings.statusPolicy === 'warn') return 'warn';
  if (rule.severity === 'invalid') return 'deny';
  const policy = rule.list === 'spec' ? settings.specPolicy : settings.statusPolicy;
  return policy === 'enforce' ? 'deny' : 'warn';
}

export const ANNOTATION = 'gateway-routability-webhook.io';

/**
 * The policy's spec apart from its variables and validations: the same for
 * every setting. failurePolicy Ignore: what the API server cannot evaluate
 * (a params informer not yet synced after a restart, a CEL error the tests
 * did not foresee) admits the write rather than refusing one the webhook
 * would admit; the webhook, where it runs, still judges it.
 */
export function policySpecFrame() {
  return {
    failurePolicy: 'Ignore',
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: [GATEWAY_API_GROUP],
          apiVersions: ['*'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['gateways', 'gateways/status'],
        },
      ],
    },
  };
}

function policyObject(
  action: PolicyAction,
  rules: readonly RuleCel[],
  settings: PolicySettings,
  names: PolicyNames,
) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: {
      name: `${names.name}-${action}`,
      annotations: {
        [`${ANNOTATION}/gep-revision`]: settings.revision,
        [`${ANNOTATION}/rules`]: [...new Set(rules.map((r) => r.code))].join(','),
      },
    },
    spec: {
      ...policySpecFrame(),
      variables: [
        ...baseVariables(settings.revision),
        ...rules.flatMap((r) => ruleVariables(r, settings.revision)),
      ],
      validations: rules.map(validation),
    },
  };
}

function bindingObject(action: PolicyAction, names: PolicyNames) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: `${names.name}-${action}` },
    spec: {
      policyName: `${names.name}-${action}`,
      validationActions: action === 'deny' ? ['Deny'] : ['Warn', 'Audit'],
      paramRef: {
        name: names.paramsName,
        namespace: names.paramsNamespace,
        // Without its params the binding is skipped: a ConfigMap not yet applied, or deleted,
        // refuses nothing (Deny would refuse every Gateway write, status included).
        parameterNotFoundAction: 'Allow',
      },
    },
  };
}

/** The policies (at most one Deny and one Warn+Audit) and their bindings for these settings. */
export function generatePolicies(
  settings: PolicySettings,
  names: PolicyNames = DEFAULT_POLICY_NAMES,
): GeneratedPolicy[] {
  const rules = policyRules(settings);
  const out: GeneratedPolicy[] = [];
  for (const action of ['deny', 'warn'] as const) {
    const mine = rules.filter((r) => actionOf(r, settings) === action);
    if (mine.length === 0) continue;
    out.push({
      action,
      policy: policyObject(action, mine, settings, names),
      binding: bindingObject(action, names),
      rules: mine.map((r) => ({ code: r.code, list: r.list })),
    });
  }
  return out;
}

/**
 * The params ConfigMap for a set of service ranges (canonical CIDRs, terminating ones listed again);
 * without ranges, one without data (the policy then knows no range and its range rules deny nothing).
 */
export function paramsConfigMap(
  ranges: ServiceRanges | undefined,
  names: PolicyNames = DEFAULT_POLICY_NAMES,
) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: names.paramsName,
      namespace: names.paramsNamespace,
      labels: { 'app.kubernetes.io/managed-by': 'routability-webhook' },
    },
    ...(ranges ? { data: paramsData(ranges) } : {}),
  };
}

/** The ConfigMap's data for a set of ranges: what serve writes when the ServiceCIDRs change. */
export function paramsData(ranges: ServiceRanges): Record<string, string> {
  return {
    [PARAMS_KEYS.serviceCIDRs]: ranges.all.map((r) => r.cidr).join(','),
    [PARAMS_KEYS.terminatingCIDRs]: ranges.all
      .filter((r) => r.terminating)
      .map((r) => r.cidr)
      .join(','),
  };
}

/** Namespaces every cluster has: the output creates no Namespace object for these. */
export const EXISTING_NAMESPACES: readonly string[] = [
  'default',
  'kube-system',
  'kube-public',
  'kube-node-lease',
];

/**
 * Everything `kubectl apply -f` needs on a new cluster, in the order that is
 * safe at every prefix: the params' Namespace (unless one every cluster has),
 * the params ConfigMap (its data only when the ranges are given: without
 * them a ConfigMap without data, so the static rules run and the range rules
 * wait for serve or a later `--service-cidr`), the policies, and only then the
 * bindings, which are what puts a policy in force. An apply stopped after any
 * object leaves a state that refuses nothing the webhook would admit.
 */
export function policyManifest(
  generated: readonly GeneratedPolicy[],
  names: PolicyNames,
  ranges: ServiceRanges | undefined,
): JsonObject[] {
  const out: JsonObject[] = [];
  if (!EXISTING_NAMESPACES.includes(names.paramsNamespace))
    out.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: names.paramsNamespace } });
  out.push(paramsConfigMap(ranges, names));
  out.push(...generated.map((g) => g.policy), ...generated.map((g) => g.binding));
  return out;
}

/** The API path a generated object is applied at (server-side apply). */
export function applyPath(object: Record<string, unknown>): string {
  const metadata = object['metadata'] as { name: string; namespace?: string };
  switch (object['kind']) {
    case 'ValidatingAdmissionPolicy':
      return `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${metadata.name}`;
    case 'ValidatingAdmissionPolicyBinding':
      return `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${metadata.name}`;
    case 'Namespace':
      return `/api/v1/namespaces/${metadata.name}`;
    default:
      return `/api/v1/namespaces/${metadata.namespace ?? 'default'}/configmaps/${metadata.name}`;
  }
}
