// Alerts that work when enabled: every rule reads a scrape the chart renders (the ServiceMonitor comes
// with the rules), and the optional API-server rules select exactly this chart's webhook names.
import { describe, expect, it } from 'vitest';
import { all, FULLNAME, helmBinary, NAMESPACE, one, render, renderError, type K8sObject } from './helm.js';

const { skipReason } = helmBinary();

interface Rule {
  alert: string;
  expr: string;
  labels: { severity: string };
}

function rules(docs: K8sObject[]): Rule[] {
  return (one(docs, 'PrometheusRule').spec.groups as { rules: Rule[] }[]).flatMap((g) => g.rules);
}

/** The series selectors (`metric{...}`) of an expression. */
function selectors(expr: string): { metric: string; labels: string }[] {
  return [...expr.matchAll(/\b([a-z_:][a-z0-9_:]*)\{([^}]*)\}/g)].map((m) => ({
    metric: m[1]!,
    labels: m[2]!,
  }));
}

/** The webhook names of the rendered configurations. */
function webhookNames(docs: K8sObject[]): string[] {
  return [...all(docs, 'ValidatingWebhookConfiguration'), ...all(docs, 'MutatingWebhookConfiguration')]
    .flatMap((c) => (c.webhooks as { name: string }[]).map((w) => w.name))
    .sort();
}

/** The names a `name=~"..."` selector matches exactly, read back as a regex. */
function namesMatched(labels: string, candidates: string[]): string[] {
  const m = /name=~"((?:[^"\\]|\\.)*)"/.exec(labels);
  if (!m) throw new Error(`no name=~ selector in {${labels}}`);
  const re = new RegExp(`^(?:${m[1]!.replace(/\\\\/g, '\\')})$`);
  return candidates.filter((c) => re.test(c)).sort();
}

const COMBINATIONS: [string, Record<string, unknown>][] = [
  ['rules alone', { 'metrics.prometheusRule.enabled': true }],
  [
    'rules and ServiceMonitor',
    { 'metrics.prometheusRule.enabled': true, 'metrics.serviceMonitor.enabled': true },
  ],
  ['rules with the audit off', { 'metrics.prometheusRule.enabled': true, 'webhook.audit.interval': '0' }],
  [
    'rules and API-server rules',
    { 'metrics.prometheusRule.enabled': true, 'metrics.prometheusRule.apiserver.enabled': true },
  ],
  [
    'API-server rules, mutating webhook off',
    {
      'metrics.prometheusRule.enabled': true,
      'metrics.prometheusRule.apiserver.enabled': true,
      'mutatingWebhook.enabled': false,
    },
  ],
];

describe.skipIf(skipReason !== undefined)('PrometheusRule: every alert reads a scrape that exists', () => {
  it.each(COMBINATIONS)(
    '%s',
    async (_name, values) => {
      const docs = await render({ setJson: values });
      const monitor = one(docs, 'ServiceMonitor');
      const service = one(docs, 'Service', FULLNAME);
      // The Prometheus Operator names the job after the Service it selects through the monitor.
      const ports = (service.spec.ports as { name: string }[]).map((p) => p.name);
      expect(ports).toContain(monitor.spec.endpoints[0].port);
      expect(monitor.spec.namespaceSelector.matchNames).toEqual([NAMESPACE]);
      for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels as Record<string, string>))
        expect(service.metadata.labels?.[k]).toBe(v);
      const names = webhookNames(docs);
      for (const rule of rules(docs)) {
        for (const s of selectors(rule.expr)) {
          if (s.metric.startsWith('apiserver_')) {
            // The API server's series: exactly this chart's webhooks, by name.
            expect(
              namesMatched(s.labels, [...names, `x${names[0]}`, 'other.example.com']),
              rule.alert,
            ).toEqual(names);
          } else {
            expect(s.labels, `${rule.alert} reads the ServiceMonitor's series`).toContain(
              `namespace="${NAMESPACE}", job="${service.metadata.name}"`,
            );
          }
        }
      }
      const apiserverAlerts = rules(docs).filter((r) => r.expr.includes('apiserver_admission_webhook_'));
      expect(apiserverAlerts.length).toBe(values['metrics.prometheusRule.apiserver.enabled'] ? 3 : 0);
    },
    60_000,
  );

  it('the API-server rules use each of the three counters, and refused calls carry the configured severity', async () => {
    const docs = await render({
      setJson: {
        'metrics.prometheusRule.enabled': true,
        'metrics.prometheusRule.apiserver.enabled': true,
        'metrics.prometheusRule.severity': 'page',
      },
    });
    const byAlert = new Map(rules(docs).map((r) => [r.alert, r]));
    expect(byAlert.get('RoutabilityWebhookFailedOpen')!.expr).toContain(
      'apiserver_admission_webhook_fail_open_count{',
    );
    const refused = byAlert.get('RoutabilityWebhookCallsRefused')!;
    expect(refused.expr).toContain('apiserver_admission_webhook_rejection_count{');
    expect(refused.expr).toContain('error_type="calling_webhook_error"');
    expect(refused.labels.severity).toBe('page');
    const errors = byAlert.get('RoutabilityWebhookCallErrors')!.expr;
    expect(errors).toContain('apiserver_admission_webhook_request_total{');
    expect(errors).toContain('code!="200"');
    expect(errors).toMatch(/> 0\.05$/);
  }, 60_000);

  it('renamed webhooks are the names the API-server rules select', async () => {
    const docs = await render({
      setJson: { 'metrics.prometheusRule.enabled': true, 'metrics.prometheusRule.apiserver.enabled': true },
      set: {
        'validatingWebhook.name': 'v.corp.example',
        'validatingWebhook.statusName': 's.corp.example',
        'mutatingWebhook.name': 'm.corp.example',
      },
    });
    expect(webhookNames(docs)).toEqual(['m.corp.example', 's.corp.example', 'v.corp.example']);
    for (const rule of rules(docs).filter((r) => r.expr.includes('apiserver_')))
      for (const s of selectors(rule.expr))
        expect(
          namesMatched(s.labels, ['m.corp.example', 's.corp.example', 'v.corp.example', 'vxcorp.example']),
        ).toEqual(['m.corp.example', 's.corp.example', 'v.corp.example']);
  }, 60_000);

  it('no rules, no ServiceMonitor unless asked; the rules refuse a Service without the metrics port', async () => {
    expect(all(await render(), 'ServiceMonitor')).toEqual([]);
    expect(all(await render(), 'PrometheusRule')).toEqual([]);
    expect(
      await renderError({
        setJson: { 'metrics.prometheusRule.enabled': true, 'service.exposeMetricsPort': false },
      }),
    ).toContain('metrics.prometheusRule.enabled (its alerts read the ServiceMonitor');
  }, 60_000);
});
