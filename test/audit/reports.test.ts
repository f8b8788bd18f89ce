/**
 * The report objects built from an audit pass: one per namespace with
 * findings, one result per finding, and valid under the published CRDs
 * (test/fixtures/report-crds) as the API server would judge them.
 */
import { describe, expect, it } from 'vitest';
import { auditPass, type AuditResult } from '../../src/audit/pass.js';
import { judgeWithContext } from '../../src/audit/judge.js';
import {
  MANAGED_BY,
  MANAGED_BY_LABEL,
  OMITTED_ANNOTATION,
  REPORT_APIS,
  REPORT_NAME,
  desiredReports,
  reportContent,
  resultKey,
  seenTimestamps,
  type ReportObject,
} from '../../src/audit/reports.js';
import { context as baseContext, ranges } from '../kit/gateways.js';
import { gateway } from '../kit/fake-apiserver.js';
import { reportValidator, type ReportCrd } from './report-crds.js';
import { finding, passOf } from './results.js';

const outside = { type: 'IPAddress', value: '192.168.7.7', routability: 'Cluster' };
const inside = { type: 'IPAddress', value: '10.96.0.20', routability: 'Cluster' };
const externalInside = { type: 'IPAddress', value: '10.96.0.30', routability: 'External' };

async function audit(objects: unknown[]): Promise<AuditResult> {
  const ctx = baseContext({ ranges: ranges('10.96.0.0/16'), statusPolicy: 'warn' });
  return auditPass(
    (async function* () {
      yield { items: objects, page: 1, restarted: false };
    })(),
    judgeWithContext(ctx),
  );
}

const uid = (g: ReturnType<typeof gateway>, value: string) => ({
  ...g,
  metadata: { ...g.metadata, uid: value },
});

const STORED = [
  uid(gateway('apps', 'two-bad', { spec: [outside, externalInside] }), 'uid-two-bad'),
  gateway('apps', 'fine', { spec: [inside] }),
  gateway('edge', 'status-only', {
    spec: [inside],
    status: [{ type: 'IPAddress', value: '192.168.1.1', routability: 'Cluster' }],
  }),
  gateway('clean', 'fine', { spec: [inside] }),
];

describe('desiredReports', () => {
  it('builds one report per namespace with findings, one result per failing entry, the Gateway as resource', async () => {
    const reports = desiredReports(await audit(STORED), REPORT_APIS.policyreport, {
      nowSeconds: 1_800_000_000,
    });
    expect([...reports.keys()].sort()).toEqual(['apps', 'edge']);
    const apps = reports.get('apps')!;
    expect(apps.apiVersion).toBe('wgpolicyk8s.io/v1alpha2');
    expect(apps.kind).toBe('PolicyReport');
    expect(apps.metadata).toEqual({
      name: REPORT_NAME,
      namespace: 'apps',
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
    });
    expect(apps.summary).toEqual({ pass: 0, fail: 2, warn: 0, error: 0, skip: 0 });
    expect(apps.results.map((r) => [r.policy, r.rule, r.result, r.severity, r.properties['field']])).toEqual([
      [
        'ClusterAddressOutsideServiceRange',
        'ClusterAddressOutsideServiceRange',
        'fail',
        'high',
        'spec.addresses[0].value',
      ],
      [
        'ExternalAddressInsideServiceRange',
        'ExternalAddressInsideServiceRange',
        'fail',
        'high',
        'spec.addresses[1].value',
      ],
    ]);
    expect(apps.results[0]!.message).toContain('spec.addresses[0].value: Invalid value: "192.168.7.7"');
    expect(apps.results[0]!.resources).toEqual([
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        namespace: 'apps',
        name: 'two-bad',
        uid: 'uid-two-bad',
      },
    ]);
    expect(apps.results[0]!.timestamp).toEqual({ seconds: 1_800_000_000, nanos: 0 });
    expect(apps.source).toBeUndefined();
    // A status finding under --status-policy warn is a warn result, not scored.
    const edge = reports.get('edge')!;
    expect(edge.summary).toMatchObject({ fail: 0, warn: 1 });
    expect(edge.results[0]).toMatchObject({
      result: 'warn',
      severity: 'medium',
      scored: false,
      properties: { scope: 'status' },
    });
  });

  it('OpenReports: the same results, the Report kind and a report-level source', async () => {
    const reports = desiredReports(await audit(STORED), REPORT_APIS.openreports, { nowSeconds: 1 });
    const apps = reports.get('apps')!;
    expect(apps.apiVersion).toBe('openreports.io/v1alpha1');
    expect(apps.kind).toBe('Report');
    expect(apps.source).toBe('gateway-routability-webhook');
    expect(apps.results).toHaveLength(2);
  });

  it('keeps the first-seen timestamp of a finding already reported', async () => {
    const result = await audit(STORED);
    const first = desiredReports(result, REPORT_APIS.policyreport, { nowSeconds: 100 });
    const seen = seenTimestamps(first.get('apps')!);
    const again = desiredReports(result, REPORT_APIS.policyreport, { nowSeconds: 500, seen });
    expect(again.get('apps')!.results.map((r) => r.timestamp.seconds)).toEqual([100, 100]);
    expect(again.get('edge')!.results.map((r) => r.timestamp.seconds)).toEqual([500]);
    expect(reportContent(again.get('apps')!)).toBe(reportContent(first.get('apps')!));
    expect(seen.get(resultKey(first.get('apps')!.results[0]!))).toBe(100);
  });

  it('caps the results of a report, counting all of them in the summary and the omitted ones in an annotation', async () => {
    const many = Array.from({ length: 5 }, (_, i) => gateway('apps', `gw-${i}`, { spec: [outside] }));
    const report = desiredReports(await audit(many), REPORT_APIS.policyreport, {
      nowSeconds: 1,
      maxResults: 3,
    }).get('apps')!;
    expect(report.results).toHaveLength(3);
    expect(report.summary.fail).toBe(5);
    expect(report.metadata.annotations).toEqual({ [OMITTED_ANNOTATION]: '2' });
  });

  it('compares content regardless of key order and of the pruned source field', async () => {
    const report = desiredReports(await audit(STORED), REPORT_APIS.policyreport, { nowSeconds: 1 }).get(
      'apps',
    )!;
    const sortKeys = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sortKeys)
        : typeof v === 'object' && v !== null
          ? Object.fromEntries(
              Object.keys(v)
                .sort()
                .reverse()
                .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
            )
          : v;
    const reordered = sortKeys(report) as ReportObject;
    expect(reportContent(reordered)).toBe(reportContent(report));
    const pruned = { ...report, results: report.results.map(({ source: _s, ...r }) => r) };
    expect(reportContent(pruned)).toBe(reportContent(report));
    const changed = { ...report, results: report.results.slice(1) };
    expect(reportContent(changed)).not.toBe(reportContent(report));
  });
});

describe('report objects against the published CRD schemas', () => {
  const cases: { crd: ReportCrd; mode: 'policyreport' | 'openreports'; pruned: RegExp[] }[] = [
    // The wg-policy-prototypes CRD predates results[].source: the API server drops it, nothing else.
    { crd: 'policyreport', mode: 'policyreport', pruned: [/^\.results\[\d+\]\.source$/] },
    { crd: 'policyreportKyverno', mode: 'policyreport', pruned: [] },
    { crd: 'openreports', mode: 'openreports', pruned: [] },
  ];
  for (const { crd, mode, pruned } of cases)
    it(`${mode} reports validate against ${crd}`, async () => {
      const validate = reportValidator(crd);
      const many = Array.from({ length: 4 }, (_, i) => gateway('apps', `gw-${i}`, { spec: [outside] }));
      const reports = desiredReports(await audit([...STORED, ...many]), REPORT_APIS[mode], {
        nowSeconds: 1_800_000_000,
        maxResults: 3,
      });
      expect(reports.size).toBe(2);
      for (const report of reports.values()) {
        const v = validate(report);
        expect(v.errors).toEqual([]);
        for (const path of v.pruned)
          expect(
            pruned.some((p) => p.test(path)),
            path,
          ).toBe(true);
        if (pruned.length > 0) expect(v.pruned.length).toBe(report.results.length);
      }
    });

  it('the validator is not a pushover: a wrong enum, a missing policy and a wrong type fail', () => {
    for (const crd of ['policyreport', 'policyreportKyverno', 'openreports'] as const) {
      const validate = reportValidator(crd);
      const bad = {
        apiVersion: 'x/y',
        kind: 'PolicyReport',
        metadata: { name: 'r', namespace: 'n' },
        summary: { fail: 'one' },
        results: [{ result: 'failed', severity: 'urgent', timestamp: { seconds: 1 } }],
      };
      const errors = validate(bad).errors.join('\n');
      expect(errors).toContain("must have required property 'policy'");
      expect(errors).toContain('/results/0/result must be equal to one of the allowed values');
      expect(errors).toContain('/results/0/severity must be equal to one of the allowed values');
      expect(errors).toContain("/results/0/timestamp must have required property 'nanos'");
      expect(errors).toContain('/summary/fail must be integer');
    }
  });
});

describe('report building: keys, defaults and what is compared', () => {
  it('a result is keyed by Gateway, rule, scope and field: each keeps its own first-seen timestamp', () => {
    const base = {
      resources: [{ namespace: 'apps', name: 'gw' }],
      rule: 'R',
      properties: { scope: 'spec', field: 'f' },
    };
    const variants = [
      { ...base, resources: [{ namespace: 'other', name: 'gw' }] },
      { ...base, resources: [{ namespace: 'apps', name: 'other' }] },
      { ...base, rule: 'S' },
      { ...base, properties: { scope: 'status', field: 'f' } },
      { ...base, properties: { scope: 'spec', field: 'g' } },
    ];
    expect(resultKey(base)).toBe('apps/gw R spec f');
    for (const v of variants) expect(resultKey(v)).not.toBe(resultKey(base));
    expect(resultKey({ resources: [], rule: 'R', properties: {} })).toBe('/ R  ');

    const gw = {
      namespace: 'apps',
      name: 'gw',
      findings: [finding({ field: 'a' }), finding({ field: 'a', check: 'status' }), finding({ field: 'b' })],
    };
    const first = desiredReports(passOf([gw]), REPORT_APIS.policyreport, { nowSeconds: 10 }).get('apps')!;
    const seen = new Map([...seenTimestamps(first)].map(([k], i) => [k, i + 1]));
    const again = desiredReports(passOf([gw]), REPORT_APIS.policyreport, { nowSeconds: 20, seen }).get(
      'apps',
    )!;
    expect(again.results.map((r) => r.timestamp.seconds)).toEqual([1, 2, 3]);
  });

  it('reads first-seen timestamps only from results with a Gateway, a rule, properties and numeric seconds', () => {
    const good = {
      resources: [{ namespace: 'apps', name: 'gw' }],
      rule: 'R',
      properties: { scope: 'spec', field: 'f' },
      timestamp: { seconds: 7 },
    };
    const rows: [string, unknown][] = [
      ['null', null],
      ['resources not a list', { ...good, resources: { namespace: 'apps' } }],
      ['rule not a string', { ...good, rule: 1 }],
      ['no properties', { ...good, properties: undefined }],
      ['no timestamp', { ...good, timestamp: undefined }],
      ['seconds as text', { ...good, timestamp: { seconds: '7' } }],
    ];
    for (const [what, bad] of rows)
      expect([...seenTimestamps({ results: [good, bad] })], what).toEqual([['apps/gw R spec f', 7]]);
    expect(seenTimestamps({ results: { 0: good } }).size).toBe(0);
    expect(seenTimestamps({}).size).toBe(0);
  });

  it('a Gateway without a namespace gets no report', () => {
    const reports = desiredReports(
      passOf([
        { namespace: '', name: 'bare', findings: [finding({ field: 'a' })] },
        { namespace: 'apps', name: 'gw', findings: [finding({ field: 'a' })] },
      ]),
      REPORT_APIS.policyreport,
      { nowSeconds: 1 },
    );
    expect([...reports.keys()]).toEqual(['apps']);
  });

  it('carries 1,000 results by default: the 1,001st is counted and omitted', () => {
    const findings = Array.from({ length: 1001 }, (_, i) => finding({ field: `f${i}` }));
    const build = (n: number) =>
      desiredReports(
        passOf([{ namespace: 'apps', name: 'gw', findings: findings.slice(0, n) }]),
        REPORT_APIS.policyreport,
        {
          nowSeconds: 1,
        },
      ).get('apps')!;
    expect(build(1000).results).toHaveLength(1000);
    expect(build(1000).metadata.annotations).toBeUndefined();
    const over = build(1001);
    expect(over.results).toHaveLength(1000);
    expect(over.summary.fail).toBe(1001);
    expect(over.metadata.annotations).toEqual({ [OMITTED_ANNOTATION]: '1' });
  });

  it('content: missing results read as none; the omitted count, the summary and each result count', () => {
    const summary = { pass: 0, fail: 1, warn: 0, error: 0, skip: 0 };
    const results = [{ rule: 'R', message: 'm' }];
    const base = { metadata: { annotations: { [OMITTED_ANNOTATION]: '2' } }, summary, results };
    expect(reportContent({ summary })).toBe(reportContent({ metadata: {}, summary, results: [] }));
    expect(reportContent({ ...base, metadata: { annotations: { other: 'x' } } })).toBe(
      reportContent({ ...base, metadata: {} }),
    );
    const differing = [
      { ...base, metadata: {} },
      { ...base, summary: { ...summary, fail: 2 } },
      { ...base, summary: undefined },
      { ...base, results: [{ rule: 'R', message: 'n' }] },
      { ...base, results: [] },
    ];
    for (const d of differing) expect(reportContent(d)).not.toBe(reportContent(base));
  });
});
