/**
 * `routability-webhook verify`: proves, against the current kubeconfig, that
 * admission works: the Gateway CRD keeps `routability`, a server-side dry-run
 * create of a valid Gateway is admitted with the field kept, one the webhook
 * must refuse is denied by this webhook's name with the catalogue's message,
 * the status path answers, and (policy mode) each binding has its policy and
 * params. One line per step; exit 0 all proven, 1 a step failed, 2 usage or
 * no answer from the API server.
 */
import { type FlagDefinitions, type FlagValues, type HelpText } from '../config/flags.js';
import { errorMessage } from '../error-text.js';
import { EXIT_OK, EXIT_VIOLATIONS, writeLine } from '../io.js';
import type { StepResult, VerifySettings } from '../verify/run.js';
import { API_SERVER_FLAGS } from './cluster-flags.js';
import { defineCommand, helpHint, type CommandRun } from './command.js';

export const VERIFY_FLAGS = {
  kubeconfig: API_SERVER_FLAGS.kubeconfig,
  namespace: {
    kind: 'string',
    default: 'default',
    description:
      'Namespace the probe Gateways are dry-run created in: one the webhook selects (not its own, not kube-system).',
  },
  webhook: {
    kind: 'boolean',
    default: true,
    description: 'Expect the validating webhook to answer (--no-webhook: policies only).',
  },
  'webhook-name': {
    kind: 'string',
    default: 'validate.routability.gateway.networking.k8s.io',
    description: "The validating webhook's name (the chart's validatingWebhook.name).",
  },
  'spec-policy': {
    kind: 'string',
    choices: ['enforce', 'warn'],
    default: 'enforce',
    description: 'The spec policy the webhook runs with: enforce expects a denial, warn a warning.',
  },
  'policy-binding': {
    kind: 'list',
    description:
      'A ValidatingAdmissionPolicyBinding that must exist with its policy and params (repeatable).',
  },
  timeout: API_SERVER_FLAGS.timeout,
} as const satisfies FlagDefinitions;

type Flags = FlagValues<typeof VERIFY_FLAGS>;

const HELP: HelpText = {
  description: [
    'Prove admission end to end with server-side dry runs (nothing is stored): the CRD keeps routability,',
    'a valid Gateway is admitted and keeps it, an invalid one is denied by the webhook, the status path',
    'answers, each --policy-binding has its policy and params.',
  ],
  notes: ['Exit codes: 0 all proven, 1 a step failed, 2 usage error or no answer from the API server.'],
};

function settingsFrom(f: Flags): VerifySettings {
  return {
    namespace: f.namespace,
    webhookName: f.webhook ? f['webhook-name'] : undefined,
    specPolicy: f['spec-policy'],
    policyBindings: f['policy-binding'] ?? [],
    timeoutMs: f.timeout,
  };
}

const LABEL = { ok: 'ok', failed: 'FAILED', unproven: 'not proven' } as const;

function report(run: CommandRun, results: readonly StepResult[], server: string): number {
  for (const r of results) writeLine(run.io.stdout, `${LABEL[r.outcome]} ${r.step}: ${r.text}`);
  const count = (o: StepResult['outcome']) => results.filter((r) => r.outcome === o).length;
  const failures = count('failed');
  writeLine(
    run.io.stdout,
    `verify: ${count('ok')} ok, ${failures} failed, ${count('unproven')} not proven (${server})`,
  );
  return failures > 0 ? EXIT_VIOLATIONS : EXIT_OK;
}

export const command = defineCommand({
  name: 'verify',
  summary: 'prove admission works on the current cluster (dry runs)',
  flags: VERIFY_FLAGS,
  help: HELP,
  usageHint: helpHint('verify'),
  options: (f: Flags) => {
    if (f.namespace === '') return { ok: false, error: '--namespace: must not be empty' };
    if (f.webhook && f['webhook-name'] === '')
      return { ok: false, error: '--webhook-name: must not be empty (--no-webhook for policies only)' };
    if (!f.webhook && (f['policy-binding'] ?? []).length === 0)
      return { ok: false, error: '--no-webhook needs at least one --policy-binding' };
    return { ok: true, value: { kubeconfig: f.kubeconfig, settings: settingsFrom(f) } };
  },
  run: async (options, run) => {
    const [{ loadKubeconfig }, { kubeClient }, { runVerify }, { describeKubeError }] = await Promise.all([
      import('../kube/kubeconfig.js'),
      import('../kube/client.js'),
      import('../verify/run.js'),
      import('../kube/errors.js'),
    ]);
    let loaded;
    try {
      loaded = loadKubeconfig({ kubeconfig: options.kubeconfig, env: run.io.env });
    } catch (err) {
      return run.fail(errorMessage(err));
    }
    const client = kubeClient(loaded.kc);
    try {
      return report(run, await runVerify(client, options.settings), loaded.server);
    } catch (err) {
      return run.fail(`no answer from ${loaded.server}: ${describeKubeError(err)}`);
    } finally {
      client.close();
    }
  },
});
