/**
 * `audit --output text|json|github|junit|sarif`: the formats `check` has, written by
 * the same writers (findings/), for Gateways read from a cluster. A finding names
 * `namespace/name` and the field path instead of a file position (in SARIF:
 * a logical location only).
 */
import { githubOutput } from '../findings/github.js';
import { jsonOutput } from '../findings/json.js';
import { junitXml, type JunitCase } from '../findings/junit.js';
import {
  gatewayLabel,
  OUTPUT_FORMATS,
  plural,
  type OutputFormat,
  type ReportLine,
} from '../findings/lines.js';
import { sarifOutput, TOOL, type SarifSubject } from '../findings/sarif.js';
import { textOutput } from '../findings/text.js';
import type { AuditResult } from './pass.js';

export const AUDIT_OUTPUTS = OUTPUT_FORMATS;
export type AuditOutput = OutputFormat;

export const AUDIT_JSON_VERSION = 1;

/** What the audit ran with, echoed in machine-readable reports. */
export interface AuditSettings {
  readonly cluster: string;
  /** The kubeconfig context that named the cluster (`in-cluster` for the service account). */
  readonly context: string;
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

/** `audit of context "kind-dev" (server https://127.0.0.1:6443), all namespaces`: which cluster the text report read. */
export function auditHeaderLine(settings: AuditSettings): string {
  const where = settings.namespace === undefined ? 'all namespaces' : `namespace ${settings.namespace}`;
  return `audit of context "${settings.context}" (server ${settings.cluster}), ${where}`;
}

/** The audit's lines: each finding of each flagged Gateway, in list order, without a place. */
function* auditLines(result: AuditResult): Generator<ReportLine> {
  for (const g of result.flagged) {
    const label = gatewayLabel(g);
    for (const finding of g.findings) yield { kind: 'finding', label, finding };
  }
}

function auditJson(report: AuditReport): unknown {
  const r = report.result;
  return {
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
}

/** One testsuite per namespace (sorted), one testcase per audited Gateway, a <failure> per violation, warnings in <system-out>. */
function auditJunit(result: AuditResult): string {
  const flagged = new Map(result.flagged.map((g) => [`${g.namespace}/${g.name}`, g]));
  const suites = new Map<string, JunitCase[]>();
  for (const key of result.audited) {
    const namespace = key.slice(0, key.indexOf('/'));
    const name = key.slice(key.indexOf('/') + 1);
    const findings = flagged.get(key)?.findings ?? [];
    const cases = suites.get(namespace) ?? [];
    cases.push({
      attrs: { classname: namespace || '(cluster)', name: gatewayLabel({ namespace, name }) },
      failures: findings
        .filter((f) => f.severity === 'violation')
        .map((f) => ({ type: f.code, message: f.message, text: f.message })),
      out: findings.filter((f) => f.severity === 'warning').map((f) => `warning: ${f.message}`),
    });
    suites.set(namespace, cases);
  }
  const failed = (cases: readonly JunitCase[]) => cases.filter((c) => c.failures?.length).length;
  const sorted = [...suites].sort(([a], [b]) => a.localeCompare(b));
  const root = {
    name: 'routability-webhook audit',
    tests: result.gateways,
    failures: sorted.reduce((n, [, cases]) => n + failed(cases), 0),
  };
  return junitXml(
    root,
    sorted.map(([namespace, cases]) => ({
      attrs: { name: namespace || '(cluster)', tests: cases.length, failures: failed(cases) },
      cases,
    })),
    true,
  );
}

/** The audit's findings for SARIF: the cluster object and field are the whole location. */
function* auditSubjects(result: AuditResult): Generator<SarifSubject> {
  for (const g of result.flagged)
    for (const finding of g.findings) yield { namespace: g.namespace || undefined, name: g.name, finding };
}

/** The audit's report in the formats `check` has, rendered by the same writers. */
export const AUDIT_FORMATTERS: Readonly<Record<AuditOutput, (report: AuditReport) => string>> = {
  text: (report) =>
    `${auditHeaderLine(report.settings)}\n` +
    textOutput(auditLines(report.result), auditSummaryLine(report.result)),
  json: (report) => jsonOutput(auditJson(report)),
  github: (report) => githubOutput(auditLines(report.result), auditSummaryLine(report.result)),
  junit: (report) => auditJunit(report.result),
  sarif: (report) =>
    sarifOutput(TOOL, auditSubjects(report.result), { errors: [], exitCode: report.exitCode }),
};
