/**
 * Which Gateway writes fail closed while no webhook replica answers (an image that cannot be
 * pulled, a wrong caBundle, a NetworkPolicy, a drain): the chart's failure domains, rendered with
 * the real helm. Spec writes (gateways) fail as validatingWebhook.failurePolicy says, Ignore until
 * the install is proven; status writes (gateways/status) have an entry of their own whose
 * failurePolicy is Ignore while statusPolicy is warn (the webhook never refuses a status write
 * then) and the operator's choice under enforce; the mutating entry likewise. And every
 * `helm install` the chart README, docs/install.md and docs/install-reference.md show renders configurations that refuse
 * nothing while the pods are not serving.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  all,
  chartDir,
  helm,
  helmBinary,
  parseManifests,
  render,
  renderError,
  repoRoot,
  type K8sObject,
} from './helm.js';

const { skipReason } = helmBinary();

interface Entry {
  name: string;
  failurePolicy: string;
  rules: { resources: string[] }[];
}

/** Each webhook entry of both configurations, keyed `kind/resource` by what its rules match. */
function failurePolicies(docs: K8sObject[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'])
    for (const config of all(docs, kind))
      for (const entry of config.webhooks as Entry[])
        for (const resource of entry.rules.flatMap((r) => r.resources)) {
          const key = `${kind === 'ValidatingWebhookConfiguration' ? 'validating' : 'mutating'} ${resource}`;
          if (key in out) throw new Error(`two entries of ${kind} match ${resource}`);
          out[key] = entry.failurePolicy;
        }
  return out;
}

describe.skipIf(skipReason !== undefined)('failure domains', () => {
  it('defaults: nothing fails closed until the install is proven; status writes never under warn', async () => {
    expect(failurePolicies(await render())).toEqual({
      'validating gateways': 'Ignore',
      'validating gateways/status': 'Ignore',
      'mutating gateways/status': 'Ignore',
    });
  });

  it('failurePolicy Fail (the proven install) makes spec writes fail closed, never status writes under warn', async () => {
    const docs = await render({ set: { 'validatingWebhook.failurePolicy': 'Fail' } });
    expect(failurePolicies(docs)).toEqual({
      'validating gateways': 'Fail',
      'validating gateways/status': 'Ignore',
      'mutating gateways/status': 'Ignore',
    });
  });

  it.each([
    ['follows failurePolicy', {}, 'Fail'],
    [
      'statusFailurePolicy Ignore keeps status open',
      { 'validatingWebhook.statusFailurePolicy': 'Ignore' },
      'Ignore',
    ],
    ['statusFailurePolicy Fail', { 'validatingWebhook.statusFailurePolicy': 'Fail' }, 'Fail'],
  ])('statusPolicy enforce: the operator chooses (%s)', async (_label, extra, expected) => {
    const docs = await render({
      set: { 'webhook.statusPolicy': 'enforce', 'validatingWebhook.failurePolicy': 'Fail', ...extra },
    });
    expect(failurePolicies(docs)['validating gateways/status']).toBe(expected);
    expect(failurePolicies(docs)['validating gateways']).toBe('Fail');
  });

  it('under statusPolicy enforce the mutating entry may fail closed too', async () => {
    const docs = await render({
      set: { 'webhook.statusPolicy': 'enforce', 'mutatingWebhook.failurePolicy': 'Fail' },
    });
    expect(failurePolicies(docs)['mutating gateways/status']).toBe('Fail');
  });

  it.each([
    [
      { 'validatingWebhook.statusFailurePolicy': 'Fail' },
      /statusFailurePolicy=Fail with webhook.statusPolicy=warn/,
    ],
    [
      { 'mutatingWebhook.failurePolicy': 'Fail' },
      /mutatingWebhook.failurePolicy=Fail with webhook.statusPolicy=warn/,
    ],
    [
      { 'validatingWebhook.statusName': 'validate.routability.gateway.networking.k8s.io' },
      /statusName must differ from validatingWebhook.name/,
    ],
  ])('refuses %j, saying why', async (set, message) => {
    expect(await renderError({ set })).toMatch(message);
  });
});

/** The `helm install` commands of a markdown text, `\` continuations joined, split into arguments. */
function helmInstalls(markdown: string): string[][] {
  const joined = markdown.replace(/\\\n\s*/g, ' ');
  return [...joined.matchAll(/^helm install [^\n]*/gm)].map((m) =>
    [...m[0].matchAll(/'([^']*)'|(\S+)/g)].map((t) => t[1] ?? t[2]!),
  );
}

/** Renders a documented `helm install RELEASE CHART ARGS…` with helm template and the same arguments. */
async function renderInstall(argv: string[]): Promise<K8sObject[]> {
  const [, , release, chart, ...rest] = argv;
  expect(chart).toBe('charts/gateway-routability-webhook');
  const args = rest.filter((a) => a !== '--create-namespace');
  const out = await helm(['template', release!, '.', ...args]);
  if (out.code !== 0) throw new Error(`helm template ${argv.join(' ')}: ${out.stderr}`);
  return parseManifests(out.stdout);
}

describe.skipIf(skipReason !== undefined)('the documented first installs', () => {
  const readme = readFileSync(join(chartDir, 'README.md'), 'utf8');
  const installSection = readme.slice(
    readme.indexOf('## Install'),
    readme.indexOf('\n## ', readme.indexOf('## Install') + 1),
  );
  const installDoc = readFileSync(join(repoRoot, 'docs', 'install.md'), 'utf8');
  const referenceDoc = readFileSync(join(repoRoot, 'docs', 'install-reference.md'), 'utf8');
  const commands = [
    ...helmInstalls(installSection),
    ...helmInstalls(installDoc),
    ...helmInstalls(referenceDoc),
  ];

  it('are found (chart README, docs/install.md and docs/install-reference.md)', () => {
    expect(helmInstalls(installSection).length).toBeGreaterThanOrEqual(1);
    expect(helmInstalls(installDoc).length).toBeGreaterThanOrEqual(1);
    expect(helmInstalls(referenceDoc).length).toBeGreaterThanOrEqual(2);
  });

  it('register nothing that refuses a Gateway write while no pod serves (an image that cannot be pulled)', async () => {
    for (const argv of commands) {
      const docs = await renderInstall(argv);
      const policies = failurePolicies(docs);
      expect(Object.keys(policies).length, argv.join(' ')).toBeGreaterThan(0);
      for (const [entry, policy] of Object.entries(policies))
        expect(policy, `${entry}: ${argv.join(' ')}`).toBe('Ignore');
      // A ValidatingAdmissionPolicy does not need the pods: none is bound to deny by a first install.
      for (const binding of all(docs, 'ValidatingAdmissionPolicyBinding'))
        expect(binding.spec.validationActions, argv.join(' ')).not.toContain('Deny');
    }
  });
});
