import { describe, expect, it } from 'vitest';
import { AUDIT_FORMATTERS, auditSummaryLine, type AuditReport } from '../../src/audit/format.js';
import type { AuditResult } from '../../src/audit/pass.js';

const violation = {
  severity: 'violation' as const,
  check: 'spec' as const,
  code: 'ClusterAddressOutsideServiceRange',
  field: 'spec.addresses[0].value',
  message:
    'spec.addresses[0].value: Invalid value: "10.0.0.5": routability Cluster requires an address inside the service range (10.96.0.0/12)',
  warning: 'spec.addresses[0].value: Cluster 10.0.0.5 outside the service range',
};
const warning = {
  severity: 'warning' as const,
  check: 'status' as const,
  code: 'ExternalAddressInsideServiceRange',
  field: 'status.addresses[0].value',
  message: 'status.addresses[0].value: Invalid value: "10.96.0.9": <detail, with a comma & <xml>>',
  warning: 'status.addresses[0].value: External 10.96.0.9 inside the service range',
};

const result: AuditResult = {
  gateways: 3,
  namespaces: 2,
  pages: 1,
  flagged: [
    { namespace: 'apps', name: 'bad', findings: [violation] },
    { namespace: 'edge', name: 'odd', findings: [warning] },
  ],
  violations: 1,
  warnings: 1,
  byCode: [
    { code: violation.code, check: 'spec', severity: 'violation', count: 1 },
    { code: warning.code, check: 'status', severity: 'warning', count: 1 },
  ],
  audited: ['apps/bad', 'apps/good', 'edge/odd'],
};

const report: AuditReport = {
  settings: {
    cluster: 'https://127.0.0.1:6443',
    context: 'kind-dev',
    namespace: undefined,
    serviceCidrs: ['10.96.0.0/12'],
    specPolicy: 'enforce',
    statusPolicy: 'warn',
    revision: 'provisional',
    allocatedIPs: true,
  },
  result,
  exitCode: 1,
};

describe('audit formats', () => {
  it('text: the context and server read, one line per finding naming the Gateway, then the summary', () => {
    expect(AUDIT_FORMATTERS.text(report)).toBe(
      [
        'audit of context "kind-dev" (server https://127.0.0.1:6443), all namespaces',
        `Gateway apps/bad: ${violation.message}`,
        `warning: Gateway edge/odd: ${warning.message}`,
        'audited 3 Gateways in 2 namespaces: 1 violation, 1 warning (ClusterAddressOutsideServiceRange 1, ExternalAddressInsideServiceRange 1)',
        '',
      ].join('\n'),
    );
  });

  it('text: the header names the one namespace audited', () => {
    const one = { ...report, settings: { ...report.settings, namespace: 'apps' } };
    expect(AUDIT_FORMATTERS.text(one).split('\n')[0]).toBe(
      'audit of context "kind-dev" (server https://127.0.0.1:6443), namespace apps',
    );
  });

  it('summary of a clean cluster has no code list', () => {
    expect(auditSummaryLine({ ...result, flagged: [], violations: 0, warnings: 0, byCode: [] })).toBe(
      'audited 3 Gateways in 2 namespaces: 0 violations, 0 warnings',
    );
  });

  it('json: versioned, with the summary, the settings and every flagged Gateway', () => {
    const parsed = JSON.parse(AUDIT_FORMATTERS.json(report)) as {
      version: number;
      summary: Record<string, unknown>;
      settings: { serviceCidrs: string[] };
      gateways: { namespace: string; name: string; passed: boolean; findings: unknown[] }[];
    };
    expect(parsed.version).toBe(1);
    expect(parsed.summary).toMatchObject({ gateways: 3, violations: 1, warnings: 1, exitCode: 1 });
    expect(parsed.settings.serviceCidrs).toEqual(['10.96.0.0/12']);
    expect(parsed.gateways.map((g) => [g.namespace, g.name, g.passed])).toEqual([
      ['apps', 'bad', false],
      ['edge', 'odd', true],
    ]);
    expect(parsed.gateways[0]!.findings[0]).toEqual(violation);
  });

  it('github: an error or warning command per finding, titled by code, with data escaped', () => {
    const lines = AUDIT_FORMATTERS.github(report).split('\n');
    expect(lines[0]).toBe(
      `::error title=ClusterAddressOutsideServiceRange::Gateway apps/bad: ${violation.message}`,
    );
    expect(lines[1]!.startsWith('::warning title=ExternalAddressInsideServiceRange::Gateway edge/odd:')).toBe(
      true,
    );
  });

  it('junit: a suite per namespace, a case per audited Gateway, failures for violations only', () => {
    const xml = AUDIT_FORMATTERS.junit(report);
    expect(xml).toContain('<testsuites name="routability-webhook audit" tests="3" failures="1">');
    expect(xml).toContain('<testsuite name="apps" tests="2" failures="1">');
    expect(xml).toContain('<testcase classname="apps" name="Gateway apps/good"/>');
    expect(xml).toContain('<failure type="ClusterAddressOutsideServiceRange"');
    expect(xml).toContain('&lt;detail, with a comma &amp; &lt;xml&gt;&gt;');
    expect(xml.match(/<failure /g)).toHaveLength(1);
  });
});

describe('audit formats, the cases the one-finding report leaves open', () => {
  /** A Gateway with a violation and a warning, one with no namespace, and suites out of order. */
  const mixed: AuditResult = {
    ...result,
    gateways: 4,
    namespaces: 3,
    flagged: [
      { namespace: 'zeta', name: 'both', findings: [violation, warning] },
      { namespace: '', name: 'bare', findings: [warning] },
    ],
    violations: 1,
    warnings: 2,
    byCode: [
      { code: violation.code, check: 'spec', severity: 'violation', count: 1 },
      { code: warning.code, check: 'spec', severity: 'warning', count: 1 },
      { code: warning.code, check: 'status', severity: 'warning', count: 1 },
    ],
    audited: ['zeta/both', '/bare', 'apps/good', 'zeta/fine'],
  };
  const mixedReport: AuditReport = { ...report, result: mixed };

  it('summary: one count per code, summed over its scopes and severities, in first-seen order', () => {
    expect(auditSummaryLine(mixed)).toBe(
      'audited 4 Gateways in 3 namespaces: 1 violation, 2 warnings (ClusterAddressOutsideServiceRange 1, ExternalAddressInsideServiceRange 2)',
    );
  });

  it('json: the whole summary and settings; a Gateway with a violation among warnings has not passed', () => {
    const parsed = JSON.parse(AUDIT_FORMATTERS.json(mixedReport)) as Record<string, unknown>;
    expect(parsed).toEqual({
      version: 1,
      summary: {
        gateways: 4,
        namespaces: 3,
        violations: 1,
        warnings: 2,
        byCode: mixed.byCode,
        exitCode: 1,
      },
      settings: { ...report.settings, namespace: undefined },
      gateways: [
        { namespace: 'zeta', name: 'both', passed: false, findings: [violation, warning] },
        { namespace: '', name: 'bare', passed: true, findings: [warning] },
      ],
    });
  });

  it('junit: suites sorted by namespace, a Gateway without one under (cluster), warnings as system-out', () => {
    const warningText =
      'status.addresses[0].value: Invalid value: "10.96.0.9": &lt;detail, with a comma &amp; &lt;xml&gt;&gt;';
    expect(AUDIT_FORMATTERS.junit(mixedReport)).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites name="routability-webhook audit" tests="4" failures="1">',
        '  <testsuite name="(cluster)" tests="1" failures="0">',
        '    <testcase classname="(cluster)" name="Gateway bare">',
        `      <system-out>warning: ${warningText}</system-out>`,
        '    </testcase>',
        '  </testsuite>',
        '  <testsuite name="apps" tests="1" failures="0">',
        '    <testcase classname="apps" name="Gateway apps/good"/>',
        '  </testsuite>',
        '  <testsuite name="zeta" tests="2" failures="1">',
        '    <testcase classname="zeta" name="Gateway zeta/both">',
        `      <failure type="ClusterAddressOutsideServiceRange" message="${violation.message.replaceAll('"', '&quot;')}">${violation.message}</failure>`,
        `      <system-out>warning: ${warningText}</system-out>`,
        '    </testcase>',
        '    <testcase classname="zeta" name="Gateway zeta/fine"/>',
        '  </testsuite>',
        '</testsuites>',
        '',
      ].join('\n'),
    );
  });

  it('junit of an empty cluster: the root is written open, with no suites', () => {
    const empty = { ...result, gateways: 0, namespaces: 0, flagged: [], byCode: [], audited: [] };
    expect(AUDIT_FORMATTERS.junit({ ...report, result: empty })).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites name="routability-webhook audit" tests="0" failures="0">',
        '</testsuites>',
        '',
      ].join('\n'),
    );
  });
});
