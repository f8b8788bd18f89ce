/**
 * `audit --output text|json|github|junit`: the formats `check` has, for
 * Gateways read from a cluster. A finding names `namespace/name` and the
 * field path instead of a file position.
 */
import { escapeData, escapeProperty } from '../check/format/github.js';
import { escapeXmlAttribute, escapeXmlText } from '../check/format/junit.js';
import { gatewayLabel, plural } from '../check/report.js';
import type { AuditResult } from './pass.js';

export const AUDIT_OUTPUTS = ['text', 'json', 'github', 'junit'] as const;
export type AuditOutput = (typeof AUDIT_OUTPUTS)[number];

export const AUDIT_JSON_VERSION = 1;

/** What the audit ran with, echoed in machine-readable reports. */
export interface AuditSettings {
  readonly cluster: string;
  readonly namespace: string | undefined;
  readonly serviceCidrs: readonly string[];
  readonly specPolicy: string;
  readonly statusPolicy: string;
  readonly revision: string;
  readonly allocatedIPs: boolean;
}

export interface AuditReport {
  readonly settings: AuditSettings;
  readonly result: AuditResult;
  readonly exitCode: number;
}

/** `audited 120 Gateways in 7 namespaces: 2 violations, 1 warning (ClusterAddressOutsideServiceRange 2, StatusDefaultedExternal 1)` */
export function auditSummaryLine(result: AuditResult): string {
  const counts = new Map<string, number>();
  for (const c of result.byCode) counts.set(c.code, (counts.get(c.code) ?? 0) + c.count);
  const byCode = [...counts].map(([code, n]) => `${code} ${n}`).join(', ');
  return (
    `audited ${plural(result.gateways, 'Gateway')} in ${plural(result.namespaces, 'namespace')}: ` +
    `${plural(result.violations, 'violation')}, ${plural(result.warnings, 'warning')}` +
    (byCode ? ` (${byCode})` : '')
  );
}

function formatText(report: AuditReport): string {
  const lines: string[] = [];
  for (const g of report.result.flagged)
    for (const f of g.findings)
      lines.push(`${f.severity === 'warning' ? 'warning: ' : ''}${gatewayLabel(g)}: ${f.message}`);
  lines.push(auditSummaryLine(report.result));
  return lines.join('\n') + '\n';
}

function formatGithub(report: AuditReport): string {
  const lines: string[] = [];
  for (const g of report.result.flagged)
    for (const f of g.findings) {
      const level = f.severity === 'violation' ? 'error' : 'warning';
      lines.push(
        `::${level} title=${escapeProperty(f.code)}::${escapeData(`${gatewayLabel(g)}: ${f.message}`)}`,
      );
    }
  lines.push(auditSummaryLine(report.result));
  return lines.join('\n') + '\n';
}

function formatJson(report: AuditReport): string {
  const r = report.result;
  const out = {
    version: AUDIT_JSON_VERSION,
    summary: {
      gateways: r.gateways,
      namespaces: r.namespaces,
      violations: r.violations,
      warnings: r.warnings,
      byCode: r.byCode,
      exitCode: report.exitCode,
    },
    settings: report.settings,
    gateways: r.flagged.map((g) => ({
      namespace: g.namespace,
      name: g.name,
      passed: g.findings.every((f) => f.severity !== 'violation'),
      findings: g.findings,
    })),
  };
  return JSON.stringify(out, null, 2) + '\n';
}

function attrs(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([k, v]) => ` ${k}="${escapeXmlAttribute(String(v))}"`)
    .join('');
}

/** One testsuite per namespace, one testcase per Gateway, a <failure> per violation, warnings in <system-out>. */
function formatJunit(report: AuditReport): string {
  const flagged = new Map(report.result.flagged.map((g) => [`${g.namespace}/${g.name}`, g]));
  const suites = new Map<string, string[]>();
  const failures = new Map<string, number>();
  for (const key of report.result.audited) {
    const namespace = key.slice(0, key.indexOf('/'));
    const name = key.slice(key.indexOf('/') + 1);
    const g = flagged.get(key);
    const violations = g?.findings.filter((f) => f.severity === 'violation') ?? [];
    const warnings = g?.findings.filter((f) => f.severity === 'warning') ?? [];
    const body = [
      ...violations.map(
        (f) =>
          `      <failure${attrs({ type: f.code, message: f.message })}>${escapeXmlText(f.message)}</failure>`,
      ),
      ...(warnings.length
        ? [
            `      <system-out>${escapeXmlText(warnings.map((f) => `warning: ${f.message}`).join('\n'))}</system-out>`,
          ]
        : []),
    ];
    const open = `    <testcase${attrs({ classname: namespace || '(cluster)', name: gatewayLabel({ namespace, name }) })}`;
    const list = suites.get(namespace) ?? [];
    list.push(body.length ? `${open}>\n${body.join('\n')}\n    </testcase>` : `${open}/>`);
    suites.set(namespace, list);
    failures.set(namespace, (failures.get(namespace) ?? 0) + (violations.length ? 1 : 0));
  }
  const xml = ['<?xml version="1.0" encoding="UTF-8"?>'];
  xml.push(
    `<testsuites${attrs({ name: 'routability-webhook audit', tests: report.result.gateways, failures: [...failures.values()].reduce((a, b) => a + b, 0) })}>`,
  );
  for (const [namespace, cases] of [...suites].sort(([a], [b]) => a.localeCompare(b))) {
    xml.push(
      `  <testsuite${attrs({ name: namespace || '(cluster)', tests: cases.length, failures: failures.get(namespace) ?? 0 })}>`,
      ...cases,
      '  </testsuite>',
    );
  }
  xml.push('</testsuites>');
  return xml.join('\n') + '\n';
}

export const AUDIT_FORMATTERS: Readonly<Record<AuditOutput, (report: AuditReport) => string>> = {
  text: formatText,
  json: formatJson,
  github: formatGithub,
  junit: formatJunit,
};
