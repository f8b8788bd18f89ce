/**
 * `routability-webhook policy`: prints (or with `--apply` writes) the
 * ValidatingAdmissionPolicies and bindings that enforce the engine's static
 * rules inside the API server, and with `--service-cidr` the params
 * ConfigMap holding the service ranges they read.
 */
import YAML from 'yaml';
import { flagList, type FlagDefinitions, type FlagValues } from '../config/flags.js';
import { RULE_FLAGS, ruleSettingsFrom } from '../config/rules.js';
import {
  applyPath,
  DEFAULT_POLICY_NAMES,
  generatePolicies,
  OUT_OF_SCOPE,
  paramsConfigMap,
  type PolicyNames,
  type PolicySettings,
} from '../policy/index.js';
import { errorMessage } from '../error-text.js';
import { EXIT_OK, writeLine } from '../io.js';
import type { KubeClient } from '../kube/client.js';
import { defineCommand, type CommandRun } from './command.js';

export const POLICY_FLAGS = {
  'gep-revision': {
    kind: 'string',
    choices: ['provisional', 'experimental'],
    default: 'provisional',
    noEnv: true,
    description: 'The GEP-5093 revision the policy enforces: provisional or experimental.',
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
    description: 'With --apply: kubeconfig file (default: in-cluster, KUBECONFIG, ~/.kube/config).',
  },
  help: { kind: 'boolean', short: 'h', noEnv: true, description: 'Show this help.' },
} as const satisfies FlagDefinitions;

function policyUsage(): string {
  return [
    'Usage: routability-webhook policy [--gep-revision REV] [--spec-policy P] [--status-policy P] [--service-cidr CIDR,…] [--apply [--kubeconfig FILE]]',
    '',
    'Prints a ValidatingAdmissionPolicy and its binding per action (Deny for enforced rules and invalid',
    'values, Warn+Audit for a warn policy) that enforce the static GEP-5093 rules inside the API server',
    '(Kubernetes 1.31 or newer), as YAML. The service ranges come from a params ConfigMap: serve keeps',
    'it in step with the ServiceCIDRs; --service-cidr writes it once. See docs/policy.md.',
    '',
    'Flags:',
    ...flagList(POLICY_FLAGS, { column: 28, defaults: false, envLabel: 'env ' }),
    '',
    'Exit codes: 0 done, 2 usage error or a failed cluster call.',
  ].join('\n');
}

interface PolicyOptions {
  readonly settings: PolicySettings;
  readonly names: PolicyNames;
  readonly objects: readonly Record<string, unknown>[];
  readonly apply: boolean;
  readonly kubeconfig: string | undefined;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

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
    if (value.length > 58 || !DNS_SUBDOMAIN.test(value))
      return { ok: false as const, error: `${flag}: "${value}" is not a DNS name of at most 58 characters` };
  const settings: PolicySettings = {
    revision: flags['gep-revision'],
    specPolicy: rules.value.specPolicy,
    statusPolicy: rules.value.statusPolicy,
    clusterDomain: rules.value.clusterDomain,
    allowedRoutability: rules.value.allowedRoutability,
  };
  const generated = generatePolicies(settings, names);
  const objects = generated.flatMap((g) => [g.policy, g.binding]);
  if (rules.value.serviceRanges) objects.push(paramsConfigMap(rules.value.serviceRanges, names));
  const value: PolicyOptions = {
    settings,
    names,
    objects,
    apply: flags.apply === true,
    kubeconfig: flags.kubeconfig,
  };
  return { ok: true as const, value };
}

/** The comment printed above the objects: what they enforce, and what they leave to the webhook. */
function header(options: PolicyOptions): string {
  const { settings, names } = options;
  const lines = [
    `Generated by routability-webhook policy (GEP-5093 ${settings.revision} revision, spec ${settings.specPolicy}, status ${settings.statusPolicy}).`,
    'Needs Kubernetes 1.31 or newer (CEL ip and cidr libraries in stored expressions).',
    `Service ranges are read from ConfigMap ${names.paramsNamespace}/${names.paramsName} (keys serviceCIDRs, terminatingCIDRs);`,
    'without it every Gateway write is denied (parameterNotFoundAction: Deny).',
    'Out of scope (the webhook enforces these):',
    ...OUT_OF_SCOPE.map((line) => `  - ${line}`),
  ];
  return lines.map((l) => `# ${l}`).join('\n');
}

export const command = defineCommand({
  name: 'policy',
  summary: 'print (or apply) a ValidatingAdmissionPolicy enforcing the static rules in the API server',
  flags: POLICY_FLAGS,
  help: policyUsage,
  usageHint: () => '\n\nRun `routability-webhook policy --help` for its flags.',
  options: optionsOf,
  run: async (options, run) => {
    if (options.apply) return applyAll(options, run);
    const docs = options.objects.map((o) => YAML.stringify(o, { lineWidth: 0 }));
    run.io.stdout.write(`${header(options)}\n---\n${docs.join('---\n')}`);
    return EXIT_OK;
  },
});

export const runPolicy = command.main;

async function applyAll(options: PolicyOptions, run: CommandRun): Promise<number> {
  // Loaded only here, so printing never pays for the Kubernetes client.
  const [{ loadKubeconfig }, { kubeClient }] = await Promise.all([
    import('../kube/kubeconfig.js'),
    import('../kube/client.js'),
  ]);
  let loaded;
  try {
    loaded = loadKubeconfig({ kubeconfig: options.kubeconfig, env: run.io.env });
  } catch (err) {
    return run.fail(`--apply: ${errorMessage(err)}`);
  }
  const client = kubeClient(loaded.kc);
  try {
    for (const object of options.objects) {
      const code = await applyOne(object, client, run);
      if (code !== EXIT_OK) return code;
    }
    return EXIT_OK;
  } finally {
    client.close();
  }
}

async function applyOne(
  object: Record<string, unknown>,
  client: KubeClient,
  run: CommandRun,
): Promise<number> {
  const { describeKubeError } = await import('../kube/errors.js');
  const path = applyPath(object);
  const what = `${String(object['kind'])}/${String((object['metadata'] as { name: string }).name)}`;
  try {
    await client.json({
      method: 'PATCH',
      path,
      query: { fieldManager: 'routability-webhook', force: 'true' },
      body: object,
      contentType: 'application/apply-patch+yaml',
      timeoutMs: 15_000,
    });
  } catch (err) {
    return run.fail(`cannot apply ${what} on ${client.server}: ${describeKubeError(err)}`);
  }
  writeLine(run.io.stdout, `${what} applied (${client.server})`);
  return EXIT_OK;
}
