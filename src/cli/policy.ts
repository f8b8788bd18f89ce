/**
 * `routability-webhook policy`: prints (or with `--apply` writes) the
 * ValidatingAdmissionPolicies and bindings that enforce the engine's static
 * rules inside the API server, and with `--service-cidr` the params
 * ConfigMap holding the service ranges they read.
 */
import YAML from 'yaml';
import { HELP_FLAG, type FlagDefinitions, type FlagValues, type HelpText } from '../config/flags.js';
import { RULE_FLAGS, ruleSettingsFrom } from '../config/rule-settings.js';
import {
  DEFAULT_POLICY_NAMES,
  generatePolicies,
  OUT_OF_SCOPE,
  policyManifest,
  type PolicyNames,
  type PolicySettings,
} from '../policy/index.js';
import type { GepRevision, ServiceRanges } from '../rules/index.js';
import { isDns1123Subdomain } from '../rules/index.js';
import { EXIT_OK, writeLine } from '../io.js';
import type { KubeClient } from '../kube/client.js';
import { defineCommand, type CommandRun } from './command.js';
import {
  applyInOrder,
  clusterClient,
  clusterRevision,
  OFFLINE_HINT,
  type RevisionFlag,
} from './policy-cluster.js';

export const POLICY_FLAGS = {
  'gep-revision': {
    kind: 'string',
    choices: ['auto', 'provisional', 'experimental'],
    default: 'auto',
    noEnv: true,
    description:
      "The GEP-5093 revision the policy enforces: auto reads the cluster's Gateway CRD (as serve does); provisional or experimental fixes it (--apply refuses a CRD of the other).",
  },
  'spec-policy': { ...RULE_FLAGS['spec-policy'], noEnv: true },
  'status-policy': { ...RULE_FLAGS['status-policy'], noEnv: true },
  'allowed-routability': { ...RULE_FLAGS['allowed-routability'], noEnv: true },
  'cluster-domain': { ...RULE_FLAGS['cluster-domain'], noEnv: true },
  'service-cidr': {
    kind: 'list',
    noEnv: true,
    description:
      'Also write the params ConfigMap with these service CIDRs (for clusters without the webhook; serve keeps it otherwise).',
  },
  name: {
    kind: 'string',
    default: DEFAULT_POLICY_NAMES.name,
    noEnv: true,
    description: 'Name prefix of the policies and bindings (<name>-deny, <name>-warn).',
  },
  'params-name': {
    kind: 'string',
    default: DEFAULT_POLICY_NAMES.paramsName,
    noEnv: true,
    description: 'The params ConfigMap.',
  },
  'params-namespace': {
    kind: 'string',
    default: DEFAULT_POLICY_NAMES.paramsNamespace,
    noEnv: true,
    description: "The params ConfigMap's namespace.",
  },
  apply: {
    kind: 'boolean',
    noEnv: true,
    description: 'Write the objects to the cluster (server-side apply) instead of printing them.',
  },
  kubeconfig: {
    kind: 'string',
    description: 'With --apply: kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config).',
  },
  help: HELP_FLAG,
} as const satisfies FlagDefinitions;

const POLICY_HELP: HelpText = {
  usage:
    '[--gep-revision auto|provisional|experimental] [--spec-policy P] [--status-policy P] [--service-cidr CIDR,…] [--apply] [--kubeconfig FILE]',
  description: [
    'Prints, in the order `kubectl apply -f` needs on a new cluster, the params Namespace and ConfigMap,',
    'a ValidatingAdmissionPolicy per action (Deny for enforced rules and invalid values, Warn+Audit for',
    'a warn policy) and then their bindings, enforcing the static GEP-5093 rules inside the API server',
    "(Kubernetes 1.31 or newer). The revision follows the cluster's Gateway CRD unless fixed. The service",
    'ranges come from the params ConfigMap: serve keeps it in step with the ServiceCIDRs; --service-cidr',
    'writes it once; without ranges the range rules deny nothing. See docs/policy.md.',
  ],
  notes: [
    'Exit codes: 0 done, 2 usage error, a revision that does not match the CRD, or a failed cluster call.',
  ],
};

type RuleSettings = Omit<PolicySettings, 'revision'>;

interface PolicyOptions {
  readonly revision: RevisionFlag;
  readonly settings: RuleSettings;
  readonly names: PolicyNames;
  readonly ranges: ServiceRanges | undefined;
  readonly apply: boolean;
  readonly kubeconfig: string | undefined;
}

function optionsOf(flags: FlagValues<typeof POLICY_FLAGS>) {
  const rules = ruleSettingsFrom(flags);
  if (!rules.ok) return rules;
  const names = {
    name: flags.name,
    paramsName: flags['params-name'],
    paramsNamespace: flags['params-namespace'],
  };
  for (const [flag, value] of [
    ['--name', names.name],
    ['--params-name', names.paramsName],
    ['--params-namespace', names.paramsNamespace],
  ] as const)
    if (value.length > 58 || !isDns1123Subdomain(value))
      return { ok: false as const, error: `${flag}: "${value}" is not a DNS name of at most 58 characters` };
  const value: PolicyOptions = {
    revision: flags['gep-revision'],
    settings: {
      specPolicy: rules.value.specPolicy,
      statusPolicy: rules.value.statusPolicy,
      clusterDomain: rules.value.clusterDomain,
      allowedRoutability: rules.value.allowedRoutability,
    },
    names,
    ranges: rules.value.serviceRanges,
    apply: flags.apply === true,
    kubeconfig: flags.kubeconfig,
  };
  return { ok: true as const, value };
}

/** The comment printed above the objects: what they enforce, and what they leave to the webhook. */
function header(options: PolicyOptions, revision: GepRevision, basis: string): string {
  const { settings, names } = options;
  const lines = [
    `Generated by routability-webhook policy (GEP-5093 ${revision} revision, spec ${settings.specPolicy}, status ${settings.statusPolicy}).`,
    `Revision: ${basis}.`,
    'Needs Kubernetes 1.31 or newer (CEL ip and cidr libraries in stored expressions).',
    `Service ranges are read from ConfigMap ${names.paramsNamespace}/${names.paramsName} (keys serviceCIDRs, terminatingCIDRs).`,
    options.ranges
      ? 'It is written below with the ranges given.'
      : 'It is written below without data: the range rules deny nothing until serve (--policy-params) or --service-cidr writes the ranges.',
    'Without the ConfigMap the bindings are skipped (parameterNotFoundAction: Allow): nothing is refused.',
    'Apply in this order (kubectl apply -f does): the bindings come last.',
    'Out of scope (the webhook enforces these):',
    ...OUT_OF_SCOPE.map((line) => `  - ${line}`),
  ];
  return lines.map((l) => `# ${l}`).join('\n');
}

/** The revision, read from the cluster when the flag says auto or the objects are applied. */
async function resolveRevision(
  options: PolicyOptions,
  client: KubeClient | undefined,
): Promise<{ ok: true; revision: GepRevision; basis: string } | { ok: false; error: string }> {
  if (!client) {
    // run() connects whenever the flag is auto: this only guards that invariant.
    if (options.revision === 'auto')
      return { ok: false, error: `--gep-revision auto needs the cluster; ${OFFLINE_HINT}` };
    return {
      ok: true,
      revision: options.revision,
      basis: `--gep-revision ${options.revision} as given (not checked against a cluster)`,
    };
  }
  const answer = await clusterRevision(options.revision, client);
  return answer.ok ? { ok: true, revision: answer.revision, basis: answer.note } : answer;
}

async function runWith(
  options: PolicyOptions,
  run: CommandRun,
  client: KubeClient | undefined,
): Promise<number> {
  const decided = await resolveRevision(options, client);
  if (!decided.ok) return run.fail(decided.error);
  if (client) writeLine(run.io.stderr, `GEP-5093 revision ${decided.revision}: ${decided.basis}`);
  const generated = generatePolicies({ ...options.settings, revision: decided.revision }, options.names);
  const objects = policyManifest(generated, options.names, options.ranges);
  if (client && options.apply) return applyInOrder(objects, client, run);
  return print(options, run, objects, decided);
}

function print(
  options: PolicyOptions,
  run: CommandRun,
  objects: readonly Record<string, unknown>[],
  decided: { revision: GepRevision; basis: string },
): number {
  const docs = objects.map((o) => YAML.stringify(o, { lineWidth: 0 }));
  run.io.stdout.write(`${header(options, decided.revision, decided.basis)}\n---\n${docs.join('---\n')}`);
  return EXIT_OK;
}

export const command = defineCommand({
  name: 'policy',
  summary: 'print (or apply) a ValidatingAdmissionPolicy enforcing the static rules in the API server',
  flags: POLICY_FLAGS,
  help: POLICY_HELP,
  usageHint: () => '\n\nRun `routability-webhook policy --help` for its flags.',
  options: optionsOf,
  run: async (options, run) => {
    // The cluster is read for --apply, and to follow its CRD (auto); a fixed revision prints offline.
    if (!options.apply && options.revision !== 'auto') return runWith(options, run, undefined);
    const connected = await clusterClient(options.kubeconfig, run.io.env);
    if (!connected.ok) {
      const why = options.apply ? '--apply' : '--gep-revision auto reads the Gateway CRD';
      return run.fail(`${why}: ${connected.error}${options.apply ? '' : `; ${OFFLINE_HINT}`}`);
    }
    try {
      return await runWith(options, run, connected.client);
    } finally {
      connected.client.close();
    }
  },
});

export const runPolicy = command.main;
