/**
 * `check --output …`: the check report in the order every format reports a
 * file in (by document, then by position; a Gateway's findings in engine
 * order), handed to the writers of findings/. The JSON document is check's
 * own (schema version 1, docs/ci.md).
 */
import { githubOutput } from '../findings/github.js';
import { jsonOutput } from '../findings/json.js';
import { junitXml, type JunitCase, type JunitSuite, type JunitProblem } from '../findings/junit.js';
import { gatewayLabel, type OutputFormat, type ReportLine } from '../findings/lines.js';
import { sarifOutput, TOOL, type SarifSubject, type ToolInfo } from '../findings/sarif.js';
import { textOutput } from '../findings/text.js';
import {
  summaryLine,
  type CheckReport,
  type FileReport,
  type GatewayReport,
  type InputError,
  type Summary,
} from './report.js';

type FileEntry =
  | { readonly kind: 'gateway'; readonly gateway: GatewayReport }
  | { readonly kind: 'error'; readonly error: InputError };

function key(entry: FileEntry): [number, number, number] {
  const document = entry.kind === 'gateway' ? entry.gateway.document : (entry.error.document ?? 0);
  const p = entry.kind === 'gateway' ? entry.gateway.position : entry.error.position;
  return [document, p?.line ?? 0, p?.column ?? 0];
}

function fileEntries(file: FileReport): FileEntry[] {
  const entries: FileEntry[] = [
    ...file.errors.map((error): FileEntry => ({ kind: 'error', error })),
    ...file.gateways.map((gateway): FileEntry => ({ kind: 'gateway', gateway })),
  ];
  // Array.prototype.sort is stable: equal keys keep their order of discovery.
  return entries.sort((a, b) => {
    const [da, la, ca] = key(a);
    const [db, lb, cb] = key(b);
    return da - db || la - lb || ca - cb;
  });
}

/** A check report's lines, file by file in report order. */
function* checkLines(report: CheckReport): Generator<ReportLine> {
  for (const file of report.files)
    for (const entry of fileEntries(file)) {
      if (entry.kind === 'error') {
        yield entry;
        continue;
      }
      const g = entry.gateway;
      const label = gatewayLabel(g);
      for (const finding of g.findings) yield { kind: 'finding', label, file: g.file, finding };
    }
}

export function formatText(report: CheckReport, summary: Summary): string {
  return textOutput(checkLines(report), summaryLine(summary));
}

export function formatGithub(report: CheckReport, summary: Summary): string {
  return githubOutput(checkLines(report), summaryLine(summary));
}

/** Fields are only ever added within a version; a change of meaning bumps it. */
export const JSON_SCHEMA_VERSION = 1;
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

/** One Gateway as a testcase: a failure per violation, warnings as its system-out. */
function gatewayCase(path: string, g: GatewayReport): JunitCase {
  const failures: JunitProblem[] = [];
  const out: string[] = [];
  for (const f of g.findings) {
    const where = `${g.file}:${f.position.line}:${f.position.column}`;
    if (f.severity === 'violation')
      failures.push({ type: f.code, message: f.message, text: `${where}: ${f.message}` });
    else out.push(`${where}: warning: ${f.code}: ${f.message}`);
  }
  return {
    attrs: { classname: path, name: gatewayLabel(g), file: path, line: g.position.line },
    failures,
    out,
  };
}

export function formatJunit(report: CheckReport): string {
  const suites: JunitSuite[] = [];
  const total = { tests: 0, failures: 0, errors: 0 };
  for (const file of report.files) {
    const cases: JunitCase[] = [];
    let failures = 0;
    let errors = 0;
    for (const entry of fileEntries(file)) {
      if (entry.kind === 'error') {
        const e = entry.error;
        errors++;
        const where = e.position ? `${e.file}:${e.position.line}:${e.position.column}` : e.file;
        const name = e.document === undefined ? 'read' : `document ${e.document}`;
        cases.push({
          attrs: {
            classname: file.path,
            name,
            file: file.path,
            ...(e.position ? { line: e.position.line } : {}),
          },
          errors: [{ type: e.code, message: e.message, text: `${where}: ${e.message}` }],
        });
        continue;
      }
      const c = gatewayCase(file.path, entry.gateway);
      if (c.failures?.length) failures++;
      cases.push(c);
    }
    total.tests += cases.length;
    total.failures += failures;
    total.errors += errors;
    suites.push({ attrs: { name: file.path, tests: cases.length, failures, errors, skipped: 0 }, cases });
  }
  return junitXml({ name: 'routability-webhook check', ...total }, suites);
}

/** A check report's findings, file by file in report order (the order of the text output). */
function* checkSubjects(report: CheckReport): Generator<SarifSubject> {
  for (const file of report.files)
    for (const entry of fileEntries(file)) {
      if (entry.kind !== 'gateway') continue;
      const g = entry.gateway;
      const anonymous = `document ${g.document} items ${g.itemPath.join('.')}`;
      for (const finding of g.findings)
        yield { namespace: g.namespace, name: g.name, file: g.file, anonymous, finding };
    }
}

export function formatSarif(report: CheckReport, summary: Summary, tool: ToolInfo = TOOL): string {
  const errors = report.files
    .flatMap((file) => fileEntries(file))
    .flatMap((entry) => (entry.kind === 'error' ? [entry.error] : []));
  return sarifOutput(tool, checkSubjects(report), { errors, exitCode: summary.exitCode });
}

/** One writer per `--output` value. */
export const FORMATTERS: Readonly<Record<OutputFormat, (report: CheckReport, summary: Summary) => string>> = {
  text: formatText,
  json: formatJson,
  github: formatGithub,
  junit: formatJunit,
  sarif: formatSarif,
};
