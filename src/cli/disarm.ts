/**
 * `routability-webhook disarm`: deletes the named admission objects
 * (policy bindings first, then webhook configurations, then policies), so
 * that nothing refuses Gateway writes while the rest of a release goes away.
 * The chart's pre-delete hook runs it. An object already gone counts as
 * removed: the command can be run again after an interrupted uninstall.
 */
import { type FlagDefinitions, type FlagValues, type HelpText } from '../config/flags.js';
import { errorMessage } from '../error-text.js';
import { EXIT_OK, EXIT_VIOLATIONS, writeLine } from '../io.js';
import type { KubeClient } from '../kube/client.js';
import { API_SERVER_FLAGS } from './cluster-flags.js';
import { defineCommand, helpHint, type CommandRun } from './command.js';

export const DISARM_FLAGS = {
  kubeconfig: API_SERVER_FLAGS.kubeconfig,
  'policy-binding': {
    kind: 'list',
    description: 'A ValidatingAdmissionPolicyBinding to delete (repeatable; deleted first).',
  },
  'validating-webhook-configuration': {
    kind: 'list',
    description: 'A ValidatingWebhookConfiguration to delete (repeatable).',
  },
  'mutating-webhook-configuration': {
    kind: 'list',
    description: 'A MutatingWebhookConfiguration to delete (repeatable).',
  },
  policy: {
    kind: 'list',
    description: 'A ValidatingAdmissionPolicy to delete (repeatable; deleted last).',
  },
  timeout: API_SERVER_FLAGS.timeout,
} as const satisfies FlagDefinitions;

type Flags = FlagValues<typeof DISARM_FLAGS>;

/** The order of deletion: what refuses writes goes first, a policy no binding uses goes last. */
const KINDS = [
  ['policy-binding', 'validatingadmissionpolicybindings'],
  ['validating-webhook-configuration', 'validatingwebhookconfigurations'],
  ['mutating-webhook-configuration', 'mutatingwebhookconfigurations'],
  ['policy', 'validatingadmissionpolicies'],
] as const;

interface Target {
  readonly resource: string;
  readonly name: string;
}

function targetsOf(f: Flags): Target[] {
  return KINDS.flatMap(([flag, resource]) => (f[flag] ?? []).map((name) => ({ resource, name })));
}

const HELP: HelpText = {
  description: [
    'Delete the named admission objects: policy bindings, then webhook configurations, then policies.',
    'An object already gone counts as removed. The chart runs this as its pre-delete hook.',
  ],
  notes: [
    'Exit codes: 0 all removed, 1 one could not be deleted, 2 usage error or no answer from the API server.',
  ],
};

/** One line per object; true when it is gone. Throws when the API server does not answer. */
async function remove(client: KubeClient, run: CommandRun, t: Target, timeoutMs: number): Promise<boolean> {
  const what = `${t.resource}/${t.name}`;
  const answer = await client.send({
    method: 'DELETE',
    path: `/apis/admissionregistration.k8s.io/v1/${t.resource}/${encodeURIComponent(t.name)}`,
    timeoutMs,
  });
  if (answer.status === 404) {
    writeLine(run.io.stdout, `${what}: already gone`);
    return true;
  }
  if (answer.status >= 200 && answer.status < 300) {
    writeLine(run.io.stdout, `${what}: deleted`);
    return true;
  }
  writeLine(
    run.io.stderr,
    `routability-webhook disarm: cannot delete ${what}: HTTP ${answer.status} ${answer.text.slice(0, 300)}`,
  );
  return false;
}

export const command = defineCommand({
  name: 'disarm',
  summary: 'delete the admission objects first (uninstall without a blocking window)',
  flags: DISARM_FLAGS,
  help: HELP,
  usageHint: helpHint('disarm'),
  options: (f: Flags) => {
    const targets = targetsOf(f);
    if (targets.length === 0) return { ok: false, error: 'name at least one object to delete' };
    if (targets.some((t) => t.name === '')) return { ok: false, error: 'an object name must not be empty' };
    return { ok: true, value: { kubeconfig: f.kubeconfig, targets, timeoutMs: f.timeout } };
  },
  run: async (options, run) => {
    const [{ loadKubeconfig }, { kubeClient }, { describeKubeError }] = await Promise.all([
      import('../kube/kubeconfig.js'),
      import('../kube/client.js'),
      import('../kube/errors.js'),
    ]);
    let loaded;
    try {
      loaded = loadKubeconfig({ kubeconfig: options.kubeconfig, env: run.io.env });
    } catch (err) {
      return run.fail(errorMessage(err));
    }
    const client = kubeClient(loaded.kc);
    let failures = 0;
    try {
      // One after the other, in order: a binding is gone before the policy it binds.
      for (const t of options.targets) if (!(await remove(client, run, t, options.timeoutMs))) failures++;
    } catch (err) {
      return run.fail(`no answer from ${loaded.server}: ${describeKubeError(err)}`);
    } finally {
      client.close();
    }
    return failures > 0 ? EXIT_VIOLATIONS : EXIT_OK;
  },
});
