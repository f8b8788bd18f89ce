// helm lint --strict, the values schema and the chart's own render-time checks.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chartDir, ciDir, ciValuesFiles, helm, helmBinary, render, renderError } from './helm.js';

const { skipReason } = helmBinary();
if (skipReason) console.warn(`chart tests skipped: ${skipReason}`);

describe.skipIf(skipReason !== undefined)('helm lint --strict', () => {
  it('every ci/ values file is exercised by the chart tests', () => {
    const onDisk = readdirSync(ciDir)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(onDisk).toEqual([...ciValuesFiles].sort());
  });

  it.each<string>(['(defaults)', ...ciValuesFiles])('passes with %s', async (file) => {
    const args = ['lint', '--strict', '.', '--namespace', 'gateway-routability'];
    if (file !== '(defaults)') args.push('--values', join(ciDir, file));
    const result = await helm(args);
    expect(result.stderr + result.stdout).toContain('0 chart(s) failed');
    expect(result.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
    expect(result.code).toBe(0);
  });

  it('fails lint when a value breaks the schema', async () => {
    const result = await helm(['lint', '--strict', '.', '--set', 'tls.mode=selfSigned']);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/tls\.mode/);
  });
});

describe.skipIf(skipReason !== undefined)('values.schema.json rejects bad values', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an unknown TLS mode', { 'tls.mode': 'selfSigned' }, /tls\.mode must be one of/],
    ['a string replica count', { replicaCount: 'two' }, /replicaCount: Invalid type/],
    ['zero replicas', { replicaCount: 0 }, /replicaCount/],
    ['an unknown top-level key', { replicas: 2 }, /Additional property replicas is not allowed/],
    ['a misspelt nested key', { webhook: { logLevl: 'debug' } }, /Additional property logLevl/],
    ['an unknown spec policy', { 'webhook.specPolicy': 'deny' }, /webhook\.specPolicy must be one of/],
    [
      'an unknown status policy',
      { 'webhook.statusPolicy': 'Enforce' },
      /webhook\.statusPolicy must be one of/,
    ],
    ['an unknown log level', { 'webhook.logLevel': 'verbose' }, /webhook\.logLevel must be one of/],
    [
      'a non-boolean allocated-IP check',
      { 'webhook.checkAllocatedIPs': 'yes' },
      /checkAllocatedIPs: Invalid type/,
    ],
    ['a port out of range', { 'webhook.port': 70000 }, /webhook\.port/],
    ['a service CIDR that is not a CIDR', { 'webhook.serviceCIDRs': ['10.96.0.0'] }, /serviceCIDRs\.0/],
    ['serviceCIDRs as a string', { 'webhook.serviceCIDRs': '10.96.0.0/12' }, /serviceCIDRs: Invalid type/],
    [
      'an allowed routability that is not domain-prefixed',
      { 'webhook.allowedRoutabilities': ['Cluster'] },
      /allowedRoutabilities\.0/,
    ],
    ['a cluster domain with upper case', { 'webhook.clusterDomain': 'Cluster.Local' }, /clusterDomain/],
    [
      'a failure policy other than Fail/Ignore',
      { 'validatingWebhook.failurePolicy': 'Deny' },
      /failurePolicy/,
    ],
    ['a timeout above 30 seconds', { 'validatingWebhook.timeoutSeconds': 31 }, /timeoutSeconds/],
    ['a timeout of 0', { 'mutatingWebhook.timeoutSeconds': 0 }, /timeoutSeconds/],
    ['a webhook path without a slash', { 'validatingWebhook.path': 'validate' }, /path/],
    ['an image digest that is not sha256', { 'image.digest': 'latest' }, /image\.digest/],
    ['a negative preStop sleep', { 'lifecycle.preStopSleepSeconds': -1 }, /preStopSleepSeconds/],
    [
      'a deny-rate threshold above 1',
      { 'metrics.prometheusRule.denyRateThreshold': 50 },
      /denyRateThreshold/,
    ],
    [
      'a cert-manager issuer kind typo',
      { 'tls.certManager.issuerRef': { name: 'x', kind: 'Issuers' } },
      /kind/,
    ],
  ];

  it.each(cases)('rejects %s', async (_label, values, message) => {
    const stderr = await renderError({ setJson: values });
    expect(stderr).toMatch(/values don't meet the specifications of the schema/);
    expect(stderr).toMatch(message);
  });

  it('accepts the documented shapes of those values', async () => {
    const docs = await render({
      setJson: {
        replicaCount: 3,
        'webhook.serviceCIDRs': ['10.96.0.0/12', 'fd00:10:96::/112'],
        'webhook.allowedRoutabilities': ['example.com/CorpWan'],
        'validatingWebhook.timeoutSeconds': 30,
        'podDisruptionBudget.minAvailable': '50%',
      },
    });
    expect(docs.find((d) => d.kind === 'Deployment')?.spec.replicas).toBe(3);
  });

  // `--set webhook.audit.interval=0` gives the number 0, `--set-string` and values files the string:
  // both turn the audit off, with its RBAC (the chart README's no-API-access install uses the former).
  it.each([
    ['--set', ['--set', 'webhook.audit.interval=0']],
    ['--set-string', ['--set-string', 'webhook.audit.interval=0']],
  ])('accepts webhook.audit.interval=0 from %s, and turns the audit off', async (_label, extraArgs) => {
    const docs = await render({ extraArgs });
    const args: string[] = docs.find((d) => d.kind === 'Deployment')?.spec.template.spec.containers[0].args;
    expect(args).toContain('--audit-interval=0');
    expect(docs.filter((d) => d.kind === 'Role')).toEqual([]);
  });

  it.each([[300], ['5'], ['-1s']])('rejects webhook.audit.interval %j', async (value) => {
    const stderr = await renderError({ setJson: { 'webhook.audit.interval': value } });
    expect(stderr).toMatch(/webhook\.audit\.interval/);
  });
});

describe.skipIf(skipReason !== undefined)('render-time checks', () => {
  it('refuses a grace period shorter than preStop sleep plus server shutdown', async () => {
    const stderr = await renderError({
      setJson: {
        'lifecycle.preStopSleepSeconds': 5,
        'webhook.shutdownTimeoutSeconds': 30,
        'lifecycle.terminationGracePeriodSeconds': 30,
      },
    });
    expect(stderr).toMatch(/terminationGracePeriodSeconds \(30\) must be at least .* \(35\)/);
  });

  it('accepts a grace period exactly covering both', async () => {
    const docs = await render({
      setJson: {
        'lifecycle.preStopSleepSeconds': 5,
        'webhook.shutdownTimeoutSeconds': 30,
        'lifecycle.terminationGracePeriodSeconds': 35,
      },
    });
    expect(docs.find((d) => d.kind === 'Deployment')?.spec.template.spec.terminationGracePeriodSeconds).toBe(
      35,
    );
  });

  it('existingSecret mode needs a Secret name and a caBundle', async () => {
    expect(await renderError({ set: { 'tls.mode': 'existingSecret' } })).toMatch(/tls\.existingSecret\.name/);
    expect(
      await renderError({ set: { 'tls.mode': 'existingSecret', 'tls.existingSecret.name': 'mine' } }),
    ).toMatch(/tls\.existingSecret\.caBundle/);
  });

  it('existingSecret mode rejects a caBundle that is not a certificate', async () => {
    const stderr = await renderError({
      set: {
        'tls.mode': 'existingSecret',
        'tls.existingSecret.name': 'mine',
        'tls.existingSecret.caBundle': 'bm90IGEgY2VydA==',
      },
    });
    expect(stderr).toMatch(/caBundle must be a PEM certificate/);
  });

  it('refuses the same port for webhook and health', async () => {
    const stderr = await renderError({ setJson: { 'webhook.port': 8080, 'webhook.healthPort': 8080 } });
    expect(stderr).toMatch(/must differ/);
  });

  it('a ServiceMonitor needs the metrics port on the Service', async () => {
    const stderr = await renderError({
      setJson: { 'metrics.serviceMonitor.enabled': true, 'service.exposeMetricsPort': false },
    });
    expect(stderr).toMatch(/exposeMetricsPort/);
  });
});

describe.skipIf(skipReason !== undefined)('kubeVersion floor', () => {
  it('Chart.yaml states >=1.30.0-0 and explains it', async () => {
    const { readFileSync } = await import('node:fs');
    const chartYaml = readFileSync(join(chartDir, 'Chart.yaml'), 'utf8');
    expect(chartYaml).toMatch(/^kubeVersion: ">=1\.30\.0-0"$/m);
    expect(chartYaml).toMatch(/matchConditions/);
    expect(chartYaml).toMatch(/1\.33/);
  });

  it('refuses Kubernetes 1.29 (no GA matchConditions)', async () => {
    const stderr = await renderError({ extraArgs: ['--kube-version', '1.29.9'] });
    expect(stderr).toMatch(/kubeVersion/);
  });

  it.each(['1.30.0', '1.33.1', 'v1.35.0-eks-1234'])('renders for Kubernetes %s', async (version) => {
    const docs = await render({ extraArgs: ['--kube-version', version] });
    expect(docs.some((d) => d.kind === 'ValidatingWebhookConfiguration')).toBe(true);
  });
});
