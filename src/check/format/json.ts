/**
 * `--output json`: a stable report, schema version 1 (documented in docs/ci.md).
 * Fields are only ever added within a version; a change of meaning bumps it.
 */
import type { CheckReport, Summary } from '../report.js';

export const JSON_SCHEMA_VERSION = 1;

/** The json format of any report: its document (each command's own schema), indented. */
export function jsonOutput(document: unknown): string {
  return JSON.stringify(document, null, 2) + '\n';
}

export function formatJson(report: CheckReport, summary: Summary): string {
  const out = {
    version: JSON_SCHEMA_VERSION,
    summary: {
      files: summary.files,
      gateways: summary.gateways,
      violations: summary.violations,
      warnings: summary.warnings,
      skippedDocuments: summary.skipped,
      emptyDocuments: summary.empty,
      inputErrors: summary.inputErrors,
      exitCode: summary.exitCode,
    },
    settings: {
      rangesFrom: report.settings.rangesFrom,
      serviceCidrs: report.settings.serviceCidrs,
      clusterDomain: report.settings.clusterDomain,
      specPolicy: report.settings.specPolicy,
      statusPolicy: report.settings.statusPolicy,
      allowedRoutability: report.settings.allowedRoutability ?? null,
      allocatedIPs: report.settings.allocatedIPs,
      gepRevision: report.settings.gepRevision,
      gepRevisionFrom: report.settings.gepRevisionFrom,
    },
    files: report.files.map((file) => ({
      path: file.path,
      read: file.read,
      skippedDocuments: file.skipped,
      emptyDocuments: file.empty,
      gateways: file.gateways.map((g) => ({
        document: g.document,
        items: g.itemPath,
        line: g.position.line,
        column: g.position.column,
        apiVersion: g.apiVersion,
        namespace: g.namespace ?? null,
        name: g.name ?? null,
        passed: g.findings.every((f) => f.severity !== 'violation'),
        findings: g.findings.map((f) => ({
          severity: f.severity,
          check: f.check,
          code: f.code,
          field: f.field,
          line: f.position.line,
          column: f.position.column,
          message: f.message,
          warning: f.warning,
        })),
      })),
      errors: file.errors.map((e) => ({
        code: e.code,
        document: e.document ?? null,
        line: e.position?.line ?? null,
        column: e.position?.column ?? null,
        message: e.message,
      })),
    })),
  };
  return jsonOutput(out);
}
