/**
 * Lists in the docs that restate what the chart renders or the code does, compared with it: the
 * alerts (operations.md, the chart README) with the rendered PrometheusRule; the RBAC table of the
 * chart README with the rendered Roles and ClusterRoles; the `code` values of requests_total
 * (metrics.md, the errors alert's row) with the error answers; and every sentence that orders the
 * places credentials come from with the order the code tries them in.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findKubeconfig } from '../../src/kube/kubeconfig-source.js';
import { helmBinary, render, type K8sObject } from '../chart/helm.js';
import { runCli } from '../kit/server-process.js';
import { docFiles, REPO } from './markdown.js';

const read = (path: string) => readFileSync(join(REPO, path), 'utf8');
const CHART_README = 'charts/gateway-routability-webhook/README.md';
const noHelm = helmBinary().skipReason;

/** The rows of the Markdown table that follows `heading` (up to the next heading). */
function tableAfter(text: string, heading: string): string[][] {
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const section = text.slice(start + heading.length + 2).split(/\n#{1,6} /)[0]!;
  return section
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|[-| ]+\|$/.test(l))
    .slice(1)
    .map((l) =>
      l
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
}

describe.skipIf(noHelm !== undefined)('alerts: the docs list what the chart renders', () => {
  it('operations.md § Alerts and the chart README name exactly the rendered alerts, each with a first response', async () => {
    const alertsOf = (docs: K8sObject[]): string[] =>
      (docs.find((d) => d.kind === 'PrometheusRule')!.spec.groups as { rules: { alert?: string }[] }[])
        .flatMap((g) => g.rules.map((r) => r.alert))
        .filter((a): a is string => a !== undefined)
        .sort();
    const webhookSide = alertsOf(await render({ setJson: { 'metrics.prometheusRule.enabled': true } }));
    const rendered = alertsOf(
      await render({
        setJson: { 'metrics.prometheusRule.enabled': true, 'metrics.prometheusRule.apiserver.enabled': true },
      }),
    );
    expect(webhookSide.length).toBeGreaterThanOrEqual(5);
    const apiserverSide = rendered.filter((a) => !webhookSide.includes(a));
    expect(apiserverSide.length).toBe(3);
    const rows = tableAfter(read('docs/operations.md'), '## Alerts');
    const inOperations = rows.map((r) => /`(\w+)`/.exec(r[0]!)![1]!);
    expect(inOperations.sort(), 'docs/operations.md § Alerts: one row per alert').toEqual(rendered);
    for (const r of rows) expect(r[2]!.length, `first response for ${r[0]}`).toBeGreaterThan(20);
    const chartRow = read(CHART_README)
      .split('\n')
      .find((l) => l.startsWith('| `metrics.prometheusRule.enabled` |'))!;
    const inChart = [...chartRow.matchAll(/`(Routability\w+)`/g)].map((m) => m[1]!).sort();
    expect(inChart, `${CHART_README}: metrics.prometheusRule.enabled lists the alerts`).toEqual(webhookSide);
    const apiserverRow = read(CHART_README)
      .split('\n')
      .find((l) => l.startsWith('| `metrics.prometheusRule.apiserver.enabled` |'))!;
    const inApiserverRow = [...apiserverRow.matchAll(/`(Routability\w+)`/g)].map((m) => m[1]!).sort();
    expect(
      inApiserverRow,
      `${CHART_README}: metrics.prometheusRule.apiserver.enabled lists its alerts`,
    ).toEqual(apiserverSide);
  }, 60_000);
});

/** `Kind resource verbs` for every rule of the Roles and ClusterRoles rendered. */
function rbacRules(docs: K8sObject[]): string[] {
  return docs
    .filter((d) => d.kind === 'Role' || d.kind === 'ClusterRole')
    .flatMap((d) =>
      (
        d.rules as { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[]
      ).map(
        (r) =>
          `${d.kind} ${r.resources.map((res) => `${res}${r.apiGroups[0] ? `.${r.apiGroups[0]}` : ''}`).join(',')}` +
          `${r.resourceNames ? ` named` : ''} ${[...r.verbs].sort().join(',')}`,
      ),
    );
}

describe.skipIf(noHelm !== undefined)('RBAC: the chart README table is what the chart renders', () => {
  it('one row per rule over the values that add rules, and no other', async () => {
    const renders = await Promise.all([
      // The lifecycle hooks' own RBAC (verify's, the pre-delete Job's) is in the table too.
      render({ lifecycleHooks: true }),
      render({ set: { 'webhook.audit.reports': 'policyreport' } }),
      render({ set: { 'webhook.audit.reports': 'openreports' } }),
      render({ setJson: { 'crdPatch.enabled': true } }),
      render({ setJson: { 'policy.enabled': true }, lifecycleHooks: true }),
    ]);
    const rendered = [...new Set(renders.flatMap(rbacRules))].sort();
    const table = tableAfter(read(CHART_README), '## RBAC it creates').map((r) => {
      const kind = r[0]!.split(' ')[0]!;
      const resource = /`([^`]+)`/.exec(r[1]!)![1]!;
      const named = r[1]!.includes(', named') ? ' named' : '';
      const verbs = [...r[2]!.matchAll(/`(\w+)`/g)].map((m) => m[1]!).sort();
      return `${kind} ${resource}${named} ${verbs.join(',')}`;
    });
    expect(table.sort(), `${CHART_README} § RBAC it creates`).toEqual(rendered);
    // The sentence that slipped before: the chart writes, so "read-only RBAC" is not true.
    expect(read(CHART_README)).not.toMatch(/read-only RBAC/);
  }, 120_000);
});

describe("operations.md: the dashboard's panels", () => {
  it('the page gives the number of panels the dashboard has, and one name for each', () => {
    const dashboard = JSON.parse(read('charts/gateway-routability-webhook/files/dashboard.json')) as {
      panels: { type: string }[];
    };
    const panels = dashboard.panels.filter((p) => p.type !== 'row').length;
    const sentence = /ships a dashboard with (\d+) panels: ([^;]*);/.exec(
      read('docs/operations.md').replace(/\n/g, ' '),
    );
    expect(sentence, 'operations.md: "ships a dashboard with N panels: a, b, …;"').not.toBeNull();
    expect(Number(sentence![1])).toBe(panels);
    // One comma-separated name per panel ("memory and event loop lag" is one panel; the last "and" joins).
    expect(sentence![2]!.replace(/, and /, ', ').split(', ').length).toBe(panels);
  });
});

describe("upgrading.md: the chart's version has its row", () => {
  it('the values table of upgrading.md names the version in Chart.yaml', () => {
    const version = /^version: *"?([^"\s]+)"?$/m.exec(
      read('charts/gateway-routability-webhook/Chart.yaml'),
    )![1]!;
    const rows = tableAfter(read('docs/upgrading.md'), '### Values added or renamed, by chart version');
    expect(
      rows.map((r) => r[0]),
      'a new chart version lists its added, renamed and removed values in docs/upgrading.md',
    ).toContain(version);
  });
});

describe('requests_total codes: metrics.md and the errors alert list every error answer', () => {
  it("the `code` values are messages.md's error answers on the webhook paths, plus 500", () => {
    const answers = read('docs/messages.md')
      .split('\n')
      .map((l) => /^\| HTTP (\d+) /.exec(l)?.[1])
      .filter((c): c is string => c !== undefined && c !== '404');
    const errors = [...new Set([...answers, '500'])].sort();
    const metricsRow = read('docs/metrics.md')
      .split('\n')
      .find((l) => l.startsWith('| `routability_webhook_requests_total` |'))!;
    const listed = /200 for every answered review; ([^)]*) for `error`/.exec(metricsRow)![1]!;
    expect([...listed.matchAll(/\d{3}/g)].map((m) => m[0]).sort(), 'docs/metrics.md').toEqual(errors);
    const alertRow = tableAfter(read('docs/operations.md'), '## Alerts').find((r) =>
      r[0]!.includes('RoutabilityWebhookErrors'),
    )!;
    for (const code of errors)
      expect(alertRow[2], `operations.md's errors alert explains ${code}`).toContain(`\`${code}\``);
  });
});

describe('kubeconfig order: every sentence that orders the sources orders them as the code does', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-order-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const TOKENS: [string, RegExp][] = [
    ['flag', /`?--kubeconfig`?(?! FILE\))/],
    ['env', /KUBECONFIG(?!_)/],
    ['in-cluster', /in-cluster/],
    ['home', /~\/\.kube\/config/],
  ];

  it('the code: --kubeconfig, then KUBECONFIG, then in-cluster, then ~/.kube/config', () => {
    const home = join(dir, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    writeFileSync(join(home, '.kube', 'config'), '');
    const token = join(dir, 'token');
    writeFileSync(token, 'x');
    const inCluster = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
    const all = {
      kubeconfig: '/flag',
      env: { ...inCluster, KUBECONFIG: '/env' },
      home,
      serviceAccountTokenFile: token,
    };
    expect(findKubeconfig(all)?.kind).toBe('flag');
    expect(findKubeconfig({ ...all, kubeconfig: undefined })?.kind).toBe('env');
    expect(findKubeconfig({ ...all, kubeconfig: undefined, env: inCluster })?.kind).toBe('in-cluster');
    expect(findKubeconfig({ ...all, kubeconfig: undefined, env: {} })?.kind).toBe('home');
  });

  it('the docs and every --help agree with it', async () => {
    const order = TOKENS.map(([name]) => name);
    const sentences: { where: string; text: string }[] = [];
    for (const doc of docFiles())
      read(doc)
        .split('\n')
        .forEach((line, i) => sentences.push({ where: `${doc}:${i + 1}`, text: line }));
    for (const command of ['serve', 'check', 'audit', 'crd-patch', 'verify', 'disarm', 'policy']) {
      const r = await runCli([command, '--help']);
      r.stdout.split('\n').forEach((line) => sentences.push({ where: `${command} --help`, text: line }));
    }
    const wrong = sentences
      .filter(({ text }) => /in-cluster/.test(text) && /KUBECONFIG(?!_)/.test(text))
      .map(({ where, text }) => {
        const found = TOKENS.map(([name, re]) => ({ name, at: text.search(re) }))
          .filter((t) => t.at >= 0)
          .sort((a, b) => a.at - b.at)
          .map((t) => t.name);
        const expected = order.filter((n) => found.includes(n));
        return found.join(' ') === expected.join(' ')
          ? undefined
          : `${where}: ${found.join(' → ')} (${text.trim()})`;
      })
      .filter((w) => w !== undefined);
    expect(
      wrong,
      'the code tries --kubeconfig, then KUBECONFIG, then in-cluster, then ~/.kube/config',
    ).toEqual([]);
  }, 60_000);
});
