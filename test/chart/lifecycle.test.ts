/**
 * The chart's lifecycle hooks as rendered: the pre-delete `disarm` Job removes exactly the admission
 * objects the chart renders, with RBAC that allows only that and exists only around the hook; the
 * `helm test` Pod (and the optional post-install/post-upgrade Job) runs `verify` with the names and
 * policy the webhook really has, as arguments the real command accepts, with RBAC limited to Gateways
 * in one namespace plus the reads verify needs. Every hook runs the binary directly (no shell).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { command as verifyCommand } from '../../src/cli/verify.js';
import { command as disarmCommand } from '../../src/cli/disarm.js';
import { parseFlags } from '../../src/config/flags.js';
import { VERIFY_FLAGS } from '../../src/cli/verify.js';
import { DISARM_FLAGS } from '../../src/cli/disarm.js';
import { all, helmBinary, NAMESPACE, one, render, type K8sObject } from './helm.js';

const { skipReason } = helmBinary();

const component = (docs: K8sObject[], name: string) =>
  docs.filter((d) => d.metadata.labels?.['app.kubernetes.io/component'] === name);
const hook = (d: K8sObject) => d.metadata.annotations?.['helm.sh/hook'];
const weight = (d: K8sObject) => Number(d.metadata.annotations?.['helm.sh/hook-weight']);
const deletePolicy = (d: K8sObject) =>
  (d.metadata.annotations?.['helm.sh/hook-delete-policy'] ?? '').split(',');
const containerOf = (d: K8sObject) => (d.kind === 'Pod' ? d.spec : d.spec.template.spec).containers[0];

/** The value of `--flag=value` arguments. */
const values = (args: string[], flag: string) =>
  args.filter((a) => a.startsWith(`--${flag}=`)).map((a) => a.slice(flag.length + 3));

describe.skipIf(skipReason !== undefined)('pre-delete hook (uninstall without a blocking window)', () => {
  let docs: K8sObject[];
  let policyDocs: K8sObject[];
  beforeAll(async () => {
    docs = await render({ lifecycleHooks: true });
    policyDocs = await render({
      lifecycleHooks: true,
      setJson: { 'policy.enabled': true },
      extraArgs: ['--kube-version', '1.33.0'],
    });
  });

  it('runs disarm on exactly the rendered webhook configurations, after its RBAC exists', () => {
    const hooks = component(docs, 'disarm');
    expect(hooks.map((d) => d.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'Job',
      'ServiceAccount',
    ]);
    for (const d of hooks) expect(hook(d), d.kind).toBe('pre-delete');
    const job = one(hooks, 'Job');
    for (const d of hooks.filter((h) => h.kind !== 'Job')) {
      expect(weight(d), d.kind).toBeLessThan(weight(job));
      expect(deletePolicy(d), d.kind).toEqual(
        expect.arrayContaining(['before-hook-creation', 'hook-succeeded', 'hook-failed']),
      );
    }
    expect(deletePolicy(job)).toEqual(expect.arrayContaining(['before-hook-creation', 'hook-succeeded']));
    const c = containerOf(job);
    expect(c.command).toBeUndefined();
    expect(c.args[0]).toBe('disarm');
    expect(values(c.args, 'validating-webhook-configuration')).toEqual([
      one(docs, 'ValidatingWebhookConfiguration').metadata.name,
    ]);
    expect(values(c.args, 'mutating-webhook-configuration')).toEqual([
      one(docs, 'MutatingWebhookConfiguration').metadata.name,
    ]);
    expect(job.spec.template.spec.serviceAccountName).toBe(one(hooks, 'ServiceAccount').metadata.name);
    const binding = one(hooks, 'ClusterRoleBinding');
    expect(binding.roleRef.name).toBe(one(hooks, 'ClusterRole').metadata.name);
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: one(hooks, 'ServiceAccount').metadata.name, namespace: NAMESPACE },
    ]);
  });

  it('its RBAC may delete those names and nothing else', () => {
    const rules = one(component(docs, 'disarm'), 'ClusterRole').rules;
    expect(rules).toEqual([
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['validatingwebhookconfigurations'],
        resourceNames: [one(docs, 'ValidatingWebhookConfiguration').metadata.name],
        verbs: ['delete'],
      },
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations'],
        resourceNames: [one(docs, 'MutatingWebhookConfiguration').metadata.name],
        verbs: ['delete'],
      },
    ]);
  });

  it('in policy mode also removes every rendered binding and policy', () => {
    const job = one(component(policyDocs, 'disarm'), 'Job');
    const args = containerOf(job).args as string[];
    const bindings = all(policyDocs, 'ValidatingAdmissionPolicyBinding')
      .map((b) => b.metadata.name)
      .sort();
    const policies = all(policyDocs, 'ValidatingAdmissionPolicy')
      .map((b) => b.metadata.name)
      .sort();
    expect(bindings.length).toBeGreaterThan(0);
    expect(values(args, 'policy-binding').sort()).toEqual(bindings);
    expect(values(args, 'policy').sort()).toEqual(policies);
    const rule = one(component(policyDocs, 'disarm'), 'ClusterRole').rules.find(
      (r: { resources: string[] }) => r.resources.includes('validatingadmissionpolicybindings'),
    );
    expect([...rule.resourceNames].sort()).toEqual(bindings);
    expect(rule.verbs).toEqual(['delete']);
  });

  it('its arguments are accepted by routability-webhook disarm', () => {
    for (const d of [docs, policyDocs]) {
      const args = containerOf(one(component(d, 'disarm'), 'Job')).args as string[];
      expect(args[0]).toBe(disarmCommand.name);
      const parsed = parseFlags(DISARM_FLAGS, args.slice(1), {});
      expect(parsed.ok, JSON.stringify(parsed)).toBe(true);
    }
  });

  // Under warn on both lists policy.yaml renders no -deny binding: disarm and verify must name
  // exactly what is rendered in every combination, or disarm fails on a 404-free name it cannot
  // delete by RBAC and verify reports a binding that never existed.
  it.each([
    ['enforce', 'enforce'],
    ['enforce', 'warn'],
    ['warn', 'enforce'],
    ['warn', 'warn'],
  ])('spec %s, status %s: disarm and verify name the rendered bindings', async (spec, status) => {
    const p = await render({
      lifecycleHooks: true,
      setJson: { 'policy.enabled': true, 'policy.specPolicy': spec, 'policy.statusPolicy': status },
      extraArgs: ['--kube-version', '1.33.0'],
    });
    const rendered = all(p, 'ValidatingAdmissionPolicyBinding')
      .map((b) => b.metadata.name)
      .sort();
    const disarm = containerOf(one(component(p, 'disarm'), 'Job')).args as string[];
    expect(values(disarm, 'policy-binding').sort()).toEqual(rendered);
    const [checked] = values(
      containerOf(one(component(p, 'verify'), 'Pod')).args as string[],
      'policy-binding',
    );
    expect(rendered).toContain(checked);
    // verify's RBAC reads that binding and its policy (same name), no other.
    const reads = one(component(p, 'verify'), 'ClusterRole').rules.find((r: { resources: string[] }) =>
      r.resources.includes('validatingadmissionpolicybindings'),
    );
    expect(reads.resourceNames).toEqual([checked]);
  });

  it('is not rendered with uninstall.removeAdmissionFirst=false', async () => {
    const off = await render({ lifecycleHooks: true, setJson: { 'uninstall.removeAdmissionFirst': false } });
    expect(component(off, 'disarm')).toEqual([]);
  });
});

describe.skipIf(skipReason !== undefined)('helm test: verify', () => {
  let docs: K8sObject[];
  beforeAll(async () => {
    docs = await render({ lifecycleHooks: true });
  });

  it('a test Pod runs verify with the rendered webhook name and spec policy, no shell', () => {
    const pod = one(component(docs, 'verify'), 'Pod');
    expect(hook(pod)).toBe('test');
    const c = containerOf(pod);
    expect(c.command).toBeUndefined();
    expect(c.args[0]).toBe(verifyCommand.name);
    expect(values(c.args, 'webhook-name')).toEqual([
      one(docs, 'ValidatingWebhookConfiguration').webhooks[0].name,
    ]);
    expect(values(c.args, 'spec-policy')).toEqual([
      one(docs, 'Deployment')
        .spec.template.spec.containers[0].args.find((a: string) => a.startsWith('--spec-policy='))
        .slice(14),
    ]);
    expect(values(c.args, 'namespace')).toEqual(['default']);
    expect(pod.spec.restartPolicy).toBe('Never');
    expect(pod.spec.serviceAccountName).toBe(one(component(docs, 'verify'), 'ServiceAccount').metadata.name);
    expect(parseFlags(VERIFY_FLAGS, c.args.slice(1), {}).ok).toBe(true);
  });

  it('its RBAC: Gateways in verify.namespace only, the CRD by name, all created before the Pod', () => {
    const objects = component(docs, 'verify');
    const pod = one(objects, 'Pod');
    for (const d of objects.filter((o) => o.kind !== 'Pod')) {
      expect(hook(d), d.kind).toBe('test');
      expect(weight(d), d.kind).toBeLessThan(weight(pod));
      expect(deletePolicy(d), d.kind).toContain('hook-succeeded');
    }
    const role = one(objects, 'Role');
    expect(role.metadata.namespace).toBe('default');
    expect(role.rules).toEqual([
      { apiGroups: ['gateway.networking.k8s.io'], resources: ['gateways'], verbs: ['create', 'list'] },
      { apiGroups: ['gateway.networking.k8s.io'], resources: ['gateways/status'], verbs: ['update'] },
    ]);
    expect(one(objects, 'RoleBinding').metadata.namespace).toBe('default');
    expect(one(objects, 'ClusterRole').rules).toEqual([
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: ['gateways.gateway.networking.k8s.io'],
        verbs: ['get'],
      },
    ]);
    expect(
      objects.map((o) => o.metadata.name).every((n) => n.endsWith('-verify') || n.endsWith('-verify-test')),
    ).toBe(true);
  });

  it('in policy mode checks the rendered deny binding and may read its params', async () => {
    const p = await render({
      lifecycleHooks: true,
      setJson: { 'policy.enabled': true },
      extraArgs: ['--kube-version', '1.33.0'],
    });
    const args = containerOf(one(component(p, 'verify'), 'Pod')).args as string[];
    const [binding] = values(args, 'policy-binding');
    const rendered = one(p, 'ValidatingAdmissionPolicyBinding', binding);
    expect(rendered.spec.validationActions).toEqual(['Deny']);
    const params = one(
      component(p, 'verify'),
      'Role',
      `${one(component(p, 'verify'), 'ServiceAccount').metadata.name}-params`,
    );
    expect(params.metadata.namespace).toBe(rendered.spec.paramRef.namespace);
    expect(params.rules).toEqual([
      {
        apiGroups: [''],
        resources: ['configmaps'],
        resourceNames: [rendered.spec.paramRef.name],
        verbs: ['get'],
      },
    ]);
  });

  it('policy alone: --no-webhook with the binding', async () => {
    const p = await render({
      lifecycleHooks: true,
      setJson: { 'policy.enabled': true, 'webhook.enabled': false, 'policy.serviceCIDRs': ['10.96.0.0/12'] },
      extraArgs: ['--kube-version', '1.33.0'],
    });
    const args = containerOf(one(component(p, 'verify'), 'Pod')).args as string[];
    expect(args).toContain('--no-webhook');
    expect(values(args, 'webhook-name')).toEqual([]);
    expect(parseFlags(VERIFY_FLAGS, args.slice(1), {}).ok).toBe(true);
  });

  it('verify.hook.enabled adds a post-install/post-upgrade Job, run after its RBAC', async () => {
    const p = await render({ lifecycleHooks: true, setJson: { 'verify.hook.enabled': true } });
    const objects = component(p, 'verify');
    const job = one(objects, 'Job');
    expect(hook(job)).toBe('post-install,post-upgrade');
    expect(containerOf(job).args).toEqual(containerOf(one(objects, 'Pod')).args);
    expect(job.spec.backoffLimit).toBe(6);
    for (const d of objects.filter((o) => !['Pod', 'Job'].includes(o.kind))) {
      expect(hook(d)?.split(','), d.kind).toEqual(['test', 'post-install', 'post-upgrade']);
      expect(weight(d)).toBeLessThan(weight(job));
    }
    expect(component(docs, 'verify').some((d) => d.kind === 'Job')).toBe(false);
  });

  it('verify.test.enabled=false renders no test Pod', async () => {
    const p = await render({ lifecycleHooks: true, setJson: { 'verify.test.enabled': false } });
    expect(component(p, 'verify')).toEqual([]);
  });
});

describe.skipIf(skipReason !== undefined)('hook Pods are never the webhook', () => {
  it('no hook Pod carries the labels the Service, PodDisruptionBudget and NetworkPolicy select', async () => {
    const docs = await render({
      lifecycleHooks: true,
      setJson: { 'verify.hook.enabled': true, 'crdPatch.enabled': true },
    });
    const selector = one(docs, 'Service').spec.selector as Record<string, string>;
    const pods = [
      ...all(docs, 'Pod').map((p) => p.metadata.labels ?? {}),
      ...all(docs, 'Job').map((j) => j.spec.template.metadata.labels ?? {}),
    ];
    expect(pods.length).toBe(4);
    for (const labels of pods)
      expect(
        Object.entries(selector).every(([k, v]) => labels[k] === v),
        JSON.stringify(labels),
      ).toBe(false);
  });
});
