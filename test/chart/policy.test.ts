/**
 * policy.enabled: the chart's ValidatingAdmissionPolicies and bindings are
 * the generator's (`routability-webhook policy`) for the same settings, so
 * the two cannot drift; the policy installs alone or beside the webhook, with
 * the params ConfigMap and (beside the webhook) the RBAC for serve to keep it
 * in step; Kubernetes older than 1.31 is refused.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHART_REVISIONS, chartPolicyFile } from '../../src/policy/chart-form.js';
import { generatePolicies, paramsData, type PolicySettings } from '../../src/policy/index.js';
import { ranges } from '../kit/gateways.js';
import {
  all,
  chartDir,
  FULLNAME,
  helmBinary,
  NAMESPACE,
  one,
  render,
  renderError,
  type K8sObject,
  type RenderOptions,
} from './helm.js';

const { skipReason } = helmBinary();
const KUBE = ['--kube-version', '1.31.0'];

const POLICY_KINDS = new Set(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);

/** The chart's policies and bindings without the chart's labels: what the generator prints. */
function policyObjects(docs: K8sObject[]) {
  return docs
    .filter((d) => POLICY_KINDS.has(d.kind))
    .map((d) => {
      expect(d.metadata.labels?.['app.kubernetes.io/instance']).toBe('rw');
      const { labels: _labels, ...metadata } = d.metadata;
      return { ...d, metadata };
    })
    .sort(byKindAndName);
}

/** helm orders its output by kind: both sides are compared in one order. */
const byKindAndName = (a: K8sObject, b: K8sObject) =>
  `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`);

function generated(settings: PolicySettings, name = FULLNAME) {
  return generatePolicies(settings, {
    name,
    paramsName: `${name}-params`,
    paramsNamespace: NAMESPACE,
  })
    .flatMap((g) => [g.policy, g.binding] as K8sObject[])
    .sort(byKindAndName);
}

describe('the chart files', () => {
  it.each(CHART_REVISIONS)('files/policy/%s.json is the generator’s (npm run policy:chart)', (revision) => {
    const committed = readFileSync(join(chartDir, 'files', 'policy', `${revision}.json`), 'utf8');
    expect(committed).toBe(chartPolicyFile(revision));
  });
});

describe.skipIf(skipReason !== undefined)('policy.enabled equals routability-webhook policy', () => {
  const cases: { title: string; opts: RenderOptions; settings: PolicySettings; name?: string }[] = [
    {
      title: 'defaults beside the webhook (provisional, spec enforce, status warn)',
      opts: { setJson: { 'policy.enabled': true } },
      settings: {
        revision: 'provisional',
        specPolicy: 'enforce',
        statusPolicy: 'warn',
        clusterDomain: 'cluster.local',
        allowedRoutability: undefined,
      },
    },
    {
      title: 'alone, experimental, spec warn, status enforce, an allow-list with a quote, another domain',
      opts: {
        set: {
          'policy.gepRevision': 'experimental',
          'policy.specPolicy': 'warn',
          'policy.statusPolicy': 'enforce',
          'webhook.clusterDomain': 'corp.example',
          'policy.name': 'gw',
        },
        setJson: {
          'policy.enabled': true,
          'webhook.enabled': false,
          'policy.serviceCIDRs': ['10.96.0.0/12'],
          'webhook.allowedRoutabilities': ["z.example/It's", 'a.example/Wan', 'z.example/It%s'],
        },
      },
      settings: {
        revision: 'experimental',
        specPolicy: 'warn',
        statusPolicy: 'enforce',
        clusterDomain: 'corp.example',
        allowedRoutability: new Set(["z.example/It's", 'a.example/Wan', 'z.example/It%s']),
      },
      name: 'gw',
    },
    {
      title: 'warn on both lists: only invalid values deny',
      opts: {
        set: { 'webhook.specPolicy': 'warn', 'webhook.gepRevision': 'experimental' },
        setJson: { 'policy.enabled': true, 'webhook.allowedRoutabilities': ['example.com/CorpWan'] },
      },
      settings: {
        revision: 'experimental',
        specPolicy: 'warn',
        statusPolicy: 'warn',
        clusterDomain: 'cluster.local',
        allowedRoutability: new Set(['example.com/CorpWan']),
      },
    },
    {
      title: 'enforce on both lists: one policy',
      opts: { set: { 'policy.statusPolicy': 'enforce' }, setJson: { 'policy.enabled': true } },
      settings: {
        revision: 'provisional',
        specPolicy: 'enforce',
        statusPolicy: 'enforce',
        clusterDomain: 'cluster.local',
        allowedRoutability: undefined,
      },
    },
  ];

  it.each(cases)('$title', async ({ opts, settings, name }) => {
    const docs = await render({ ...opts, extraArgs: KUBE });
    const want = generated(settings, name);
    expect(want.length).toBeGreaterThan(0);
    expect(policyObjects(docs)).toEqual(want);
  });
});

describe.skipIf(skipReason !== undefined)('policy.enabled: what it installs', () => {
  let alone: K8sObject[];
  let beside: K8sObject[];
  beforeAll(async () => {
    [alone, beside] = await Promise.all([
      render({
        setJson: {
          'policy.enabled': true,
          'webhook.enabled': false,
          'policy.serviceCIDRs': ['10.96.0.0/12', 'fd00:10:96::/112'],
        },
        extraArgs: KUBE,
      }),
      render({ setJson: { 'policy.enabled': true }, extraArgs: KUBE }),
    ]);
  });

  it('alone: the policies, bindings and params, and nothing of the webhook', () => {
    expect(alone.map((d) => d.kind).sort()).toEqual(
      [
        'ConfigMap',
        'ValidatingAdmissionPolicy',
        'ValidatingAdmissionPolicy',
        'ValidatingAdmissionPolicyBinding',
        'ValidatingAdmissionPolicyBinding',
      ].sort(),
    );
    const params = one(alone, 'ConfigMap');
    expect(params.metadata).toMatchObject({ name: `${FULLNAME}-params`, namespace: NAMESPACE });
    // The same data `policy --service-cidr` writes.
    expect(params.data).toEqual(paramsData(ranges('10.96.0.0/12', 'fd00:10:96::/112')));
    for (const binding of all(alone, 'ValidatingAdmissionPolicyBinding'))
      expect(binding.spec.paramRef).toEqual({
        name: `${FULLNAME}-params`,
        namespace: NAMESPACE,
        // A params ConfigMap not yet created (or deleted) skips the binding: it refuses nothing.
        parameterNotFoundAction: 'Allow',
      });
  });

  it('beside the webhook: params without data (serve writes them) and get/patch on that one ConfigMap', () => {
    expect(one(beside, 'Deployment')).toBeDefined();
    expect(one(beside, 'ValidatingWebhookConfiguration')).toBeDefined();
    const params = one(beside, 'ConfigMap', `${FULLNAME}-params`);
    expect(params.data).toBeUndefined();
    const role = one(beside, 'Role', `${FULLNAME}-policy-params`);
    expect(role.rules).toEqual([
      {
        apiGroups: [''],
        resources: ['configmaps'],
        resourceNames: [`${FULLNAME}-params`],
        verbs: ['get', 'patch'],
      },
    ]);
    const pod = one(beside, 'Deployment').spec.template.spec;
    expect(pod.containers[0].args).toContain(`--policy-params=${NAMESPACE}/${FULLNAME}-params`);
    expect(pod.automountServiceAccountToken).toBe(true);
    const binding = one(beside, 'RoleBinding', `${FULLNAME}-policy-params`);
    expect(binding.roleRef.name).toBe(role.metadata.name);
    expect(binding.subjects[0].name).toBe(one(beside, 'Deployment').spec.template.spec.serviceAccountName);
  });

  it('warn vs enforce: a warn list binds with Warn and Audit, an enforced one with Deny', async () => {
    const mixed = await render({
      set: { 'policy.specPolicy': 'warn', 'policy.statusPolicy': 'enforce' },
      setJson: { 'policy.enabled': true },
      extraArgs: KUBE,
    });
    const actions = (docs: K8sObject[]) =>
      Object.fromEntries(
        all(docs, 'ValidatingAdmissionPolicyBinding').map((b) => [b.metadata.name, b.spec.validationActions]),
      );
    expect(actions(mixed)).toEqual({
      [`${FULLNAME}-deny`]: ['Deny'],
      [`${FULLNAME}-warn`]: ['Warn', 'Audit'],
    });
    // Warn on both lists (the warn-first rollout): no -deny policy or binding, nothing is refused.
    const warn = await render({
      set: { 'policy.specPolicy': 'warn' },
      setJson: { 'policy.enabled': true },
      extraArgs: KUBE,
    });
    expect(actions(warn)).toEqual({ [`${FULLNAME}-warn`]: ['Warn', 'Audit'] });
    expect(all(warn, 'ValidatingAdmissionPolicy').map((p) => p.metadata.name)).toEqual([`${FULLNAME}-warn`]);
  });

  it('is off by default', async () => {
    const docs = await render({ extraArgs: KUBE });
    expect(docs.filter((d) => POLICY_KINDS.has(d.kind) || d.metadata.name.endsWith('-params'))).toEqual([]);
  });
});

describe.skipIf(skipReason !== undefined)('policy.enabled: refusals', () => {
  it.each(['1.30.9', 'v1.30.2-gke.1500'])('refuses Kubernetes %s, naming 1.31', async (version) => {
    const stderr = await renderError({
      setJson: { 'policy.enabled': true },
      extraArgs: ['--kube-version', version],
    });
    expect(stderr).toMatch(/policy\.enabled needs Kubernetes 1\.31 or newer/);
  });

  it.each(['1.31.0', 'v1.35.0-eks-1234'])('renders for Kubernetes %s', async (version) => {
    const docs = await render({
      setJson: { 'policy.enabled': true },
      extraArgs: ['--kube-version', version],
    });
    expect(all(docs, 'ValidatingAdmissionPolicy').length).toBeGreaterThan(0);
  });

  it('refuses the policy alone without service CIDRs', async () => {
    const stderr = await renderError({
      setJson: { 'policy.enabled': true, 'webhook.enabled': false },
      extraArgs: KUBE,
    });
    expect(stderr).toMatch(/needs policy\.serviceCIDRs/);
  });

  it('refuses to install nothing', async () => {
    const stderr = await renderError({ setJson: { 'webhook.enabled': false }, extraArgs: KUBE });
    expect(stderr).toMatch(/installs nothing unless policy\.enabled=true/);
  });

  it('the schema refuses an unknown policy value', async () => {
    const stderr = await renderError({ setJson: { 'policy.enforce': true }, extraArgs: KUBE });
    expect(stderr).toMatch(/policy/);
    expect(stderr).toMatch(/enforce/);
  });
});
