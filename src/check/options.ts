/**
 * `check`'s flags: the rule flags `serve` takes (one definition, in
 * config/rule-settings.ts), plus inputs, the range source and the output format.
 */
import {
  envName,
  HELP_FLAG,
  parseFlags,
  type FlagDefinitions,
  type FlagValues,
  type HelpText,
  type Parsed,
} from '../config/flags.js';
import { RULE_FLAGS, ruleSettingsFrom, type RuleConfig } from '../config/rule-settings.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../findings/lines.js';

const FAIL_ON = ['violation', 'warning'] as const;
export type FailOn = (typeof FAIL_ON)[number];

export const CHECK_FLAGS = {
  filename: {
    kind: 'list',
    short: 'f',
    noEnv: true,
    description:
      'Manifest file, folder (recursive: *.yaml, *.yml, *.json) or - for standard input. Repeat or comma-separate; paths may also be given as arguments.',
  },
  ...RULE_FLAGS,
  'from-cluster': {
    kind: 'boolean',
    default: false,
    description:
      'Read the service ranges and allocated ClusterIPs once from the cluster of the current kubeconfig. --service-cidr, when also given, replaces the ranges.',
  },
  kubeconfig: {
    kind: 'string',
    description:
      'With --from-cluster: kubeconfig file (default: KUBECONFIG, then in-cluster service account, then ~/.kube/config).',
  },
  output: {
    kind: 'string',
    short: 'o',
    default: 'text',
    choices: OUTPUT_FORMATS,
    description:
      'Report format: text (file:line:col lines), json (docs/ci.md), github (workflow annotations), junit (XML), sarif (SARIF 2.1.0, code scanning).',
  },
  'fail-on': {
    kind: 'string',
    default: 'violation',
    choices: FAIL_ON,
    description: 'What fails the check (exit 1): violation, or warning (warnings fail it too).',
  },
  help: HELP_FLAG,
} as const satisfies FlagDefinitions;

export interface CheckOptions {
  readonly filenames: readonly string[];
  readonly rules: RuleConfig;
  readonly fromCluster: boolean;
  readonly kubeconfig: string | undefined;
  readonly output: OutputFormat;
  readonly failOn: FailOn;
}

/** Validates check's flag values into its options. */
export function checkOptionsFrom(
  f: FlagValues<typeof CHECK_FLAGS>,
  paths: readonly string[] = [],
): Parsed<CheckOptions> {
  const rules = ruleSettingsFrom(f);
  if (!rules.ok) return rules;
  // -f inputs first, then the arguments: a hook passes file names after its own -f.
  const filenames = [...(f.filename ?? []), ...paths];
  const fromCluster = f['from-cluster'];
  const value: CheckOptions = {
    filenames,
    rules: rules.value,
    fromCluster,
    kubeconfig: f.kubeconfig,
    output: f.output,
    failOn: f['fail-on'],
  };
  if (filenames.length === 0)
    return { ok: false, error: 'no input: give PATH or -f PATH (a file, a folder, or - for stdin)' };
  if (rules.value.serviceCidrs.length === 0 && !fromCluster)
    return {
      ok: false,
      error: `the service ranges are required: give --service-cidr CIDR (or ${envName('service-cidr')}), or --from-cluster`,
    };
  if (value.kubeconfig !== undefined && !fromCluster)
    return { ok: false, error: '--kubeconfig needs --from-cluster' };
  return { ok: true, value };
}

export function parseCheckOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Parsed<CheckOptions> {
  const parsed = parseFlags(CHECK_FLAGS, argv, env, { positionals: true });
  if (!parsed.ok) return parsed;
  return checkOptionsFrom(parsed.value.flags, parsed.value.positionals);
}

/** What `check --help` says besides its flags. */
export const CHECK_HELP: HelpText = {
  usage: '[-f PATH ...] [PATH ...] (--service-cidr CIDR | --from-cluster) [flags]',
  description: [
    "Checks the Gateways in Kubernetes manifests offline with the webhook's own rules: spec as a CREATE,",
    'status (when present) as a status update. Other objects are skipped and counted.',
  ],
  notes: [
    'Exit status: 0 no violations; 1 violations (with --fail-on warning: also warnings); 2 usage error',
    'or unreadable input (2 wins). Warnings (status findings under --status-policy warn, warning-only',
    'rules) fail the check only with --fail-on warning.',
    'See docs/ci.md for pipeline examples and the JSON report schema.',
  ],
  valueNames: {
    filename: 'PATH',
    'service-cidr': 'CIDR',
    'cluster-domain': 'DOMAIN',
    'allowed-routability': 'VALUE',
    kubeconfig: 'FILE',
  },
};
