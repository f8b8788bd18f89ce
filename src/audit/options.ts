/**
 * `audit`'s flags: the rule flags every rule-running command shares, plus
 * the namespace, the kubeconfig, the page size and the output format.
 */
import {
  HELP_FLAG,
  type FlagDefinitions,
  type FlagValues,
  type HelpText,
  type Parsed,
} from '../config/flags.js';
import { RULE_FLAGS, ruleSettingsFrom, type RuleConfig } from '../config/rule-settings.js';
import { AUDIT_OUTPUTS, type AuditOutput } from './format.js';
import { isDns1123Label } from '../rules/index.js';

export const AUDIT_FLAGS = {
  namespace: {
    kind: 'string',
    short: 'n',
    description: 'Audit the Gateways of this namespace only (default: all namespaces).',
  },
  ...RULE_FLAGS,
  kubeconfig: {
    kind: 'string',
    description:
      'Kubeconfig file (default: KUBECONFIG, then in-cluster service account, then ~/.kube/config).',
  },
  'page-size': {
    kind: 'integer',
    default: 250,
    description: 'Gateways per list request (limit/continue); at most one page of objects is held at a time.',
  },
  output: {
    kind: 'string',
    short: 'o',
    default: 'text',
    choices: AUDIT_OUTPUTS,
    description:
      'Report format: text, json (versioned), github (workflow annotations), junit (XML), sarif (SARIF 2.1.0, logical locations).',
  },
  help: HELP_FLAG,
} as const satisfies FlagDefinitions;

export interface AuditOptions {
  readonly namespace: string | undefined;
  readonly rules: RuleConfig;
  readonly kubeconfig: string | undefined;
  readonly pageSize: number;
  readonly output: AuditOutput;
}

export function auditOptionsFrom(f: FlagValues<typeof AUDIT_FLAGS>): Parsed<AuditOptions> {
  const rules = ruleSettingsFrom(f);
  if (!rules.ok) return rules;
  const namespace = f.namespace === '' ? undefined : f.namespace;
  if (namespace !== undefined && !isDns1123Label(namespace))
    return { ok: false, error: `--namespace: "${namespace}" is not a namespace name (RFC 1123 label)` };
  const pageSize = f['page-size'];
  if (pageSize < 1 || pageSize > 10_000)
    return { ok: false, error: `--page-size: ${pageSize} is outside 1..10000` };
  return {
    ok: true,
    value: { namespace, rules: rules.value, kubeconfig: f.kubeconfig, pageSize, output: f.output },
  };
}

/** What `audit --help` says besides its flags. */
export const AUDIT_HELP: HelpText = {
  usage: '[-n NAMESPACE] [--service-cidr CIDR] [flags]',
  description: [
    "Judges the Gateways stored in the cluster with the webhook's own rules, as serve would judge",
    'a write of them: spec as a CREATE, status as a status update. Service ranges, allocated',
    'ClusterIPs and the GEP revision are read from the cluster, as `check --from-cluster` does.',
  ],
  notes: [
    'Exit status: 0 no violations; 1 violations; 2 usage error, or the cluster could not be read.',
    'See docs/audit.md for the rollout guide and the JSON report.',
  ],
};
