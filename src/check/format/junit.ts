/**
 * `--output junit`: JUnit XML for CI test reports. One testsuite per file,
 * one testcase per Gateway with a <failure> per violation and warnings in
 * <system-out>; input problems are testcases with an <error>.
 */
import { gatewayLabel, type CheckReport, type GatewayReport } from '../report.js';
import { fileEntries } from './order.js';

/** Characters XML 1.0 cannot carry at all (controls other than tab, LF, CR; lone surrogates; U+FFFE/F). */
const NOT_XML =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function escapeXmlText(text: string): string {
  return text
    .replace(NOT_XML, '\uFFFD')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;');
}

export function escapeXmlAttribute(text: string): string {
  return escapeXmlText(text)
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;')
    .replaceAll('\t', '&#9;')
    .replaceAll('\n', '&#10;')
    .replaceAll('\r', '&#13;');
}

function attrs(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([k, v]) => ` ${k}="${escapeXmlAttribute(String(v))}"`)
    .join('');
}

/** One Gateway as a testcase: a failure per violation, warnings as its system-out. */
function gatewayTestcase(path: string, g: GatewayReport): { failed: boolean; xml: string } {
  const body: string[] = [];
  const warnings: string[] = [];
  for (const f of g.findings) {
    const where = `${g.file}:${f.position.line}:${f.position.column}`;
    if (f.severity === 'violation')
      body.push(
        `      <failure${attrs({ type: f.code, message: f.message })}>${escapeXmlText(`${where}: ${f.message}`)}</failure>`,
      );
    else warnings.push(`${where}: warning: ${f.code}: ${f.message}`);
  }
  const failed = body.length > 0;
  if (warnings.length > 0) body.push(`      <system-out>${escapeXmlText(warnings.join('\n'))}</system-out>`);
  const open = `    <testcase${attrs({ classname: path, name: gatewayLabel(g), file: path, line: g.position.line })}`;
  return { failed, xml: body.length === 0 ? `${open}/>` : `${open}>\n${body.join('\n')}\n    </testcase>` };
}

export function formatJunit(report: CheckReport): string {
  const suites: string[] = [];
  let totalTests = 0;
  let totalFailures = 0;
  let totalErrors = 0;
  for (const file of report.files) {
    const cases: string[] = [];
    let failures = 0;
    let errors = 0;
    for (const entry of fileEntries(file)) {
      if (entry.kind === 'error') {
        const e = entry.error;
        errors++;
        const where = e.position ? `${e.file}:${e.position.line}:${e.position.column}` : e.file;
        const name = e.document === undefined ? 'read' : `document ${e.document}`;
        cases.push(
          `    <testcase${attrs({ classname: file.path, name, file: file.path, ...(e.position ? { line: e.position.line } : {}) })}>\n` +
            `      <error${attrs({ type: e.code, message: e.message })}>${escapeXmlText(`${where}: ${e.message}`)}</error>\n` +
            `    </testcase>`,
        );
        continue;
      }
      const gatewayCase = gatewayTestcase(file.path, entry.gateway);
      if (gatewayCase.failed) failures++;
      cases.push(gatewayCase.xml);
    }
    totalTests += cases.length;
    totalFailures += failures;
    totalErrors += errors;
    suites.push(
      `  <testsuite${attrs({ name: file.path, tests: cases.length, failures, errors, skipped: 0 })}` +
        (cases.length === 0 ? '/>' : `>\n${cases.join('\n')}\n  </testsuite>`),
    );
  }
  const root = attrs({
    name: 'routability-webhook check',
    tests: totalTests,
    failures: totalFailures,
    errors: totalErrors,
  });
  return (
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      suites.length === 0
        ? `<testsuites${root}/>`
        : `<testsuites${root}>\n${suites.join('\n')}\n</testsuites>`,
    ].join('\n') + '\n'
  );
}
