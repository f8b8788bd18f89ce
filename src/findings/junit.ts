/**
 * `--output junit`: JUnit XML for CI test reports. A report becomes suites of
 * testcases (check: a suite per file, a case per Gateway or input problem;
 * the audit: a suite per namespace, a case per Gateway) with a <failure> per
 * violation, an <error> per input problem and warnings in <system-out>; this
 * file writes any such document.
 */

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

type Attributes = Readonly<Record<string, string | number>>;

function attrs(values: Attributes): string {
  return Object.entries(values)
    .map(([k, v]) => ` ${k}="${escapeXmlAttribute(String(v))}"`)
    .join('');
}

/** A <failure> or <error>: its type (the code), its message attribute, its text. */
export interface JunitProblem {
  readonly type: string;
  readonly message: string;
  readonly text: string;
}

export interface JunitCase {
  readonly attrs: Attributes;
  readonly failures?: readonly JunitProblem[];
  readonly errors?: readonly JunitProblem[];
  /** Lines of <system-out> (warnings). */
  readonly out?: readonly string[];
}

export interface JunitSuite {
  readonly attrs: Attributes;
  readonly cases: readonly JunitCase[];
}

function problem(tag: 'failure' | 'error', p: JunitProblem): string {
  return `      <${tag}${attrs({ type: p.type, message: p.message })}>${escapeXmlText(p.text)}</${tag}>`;
}

function caseXml(c: JunitCase): string {
  const body = [
    ...(c.failures ?? []).map((p) => problem('failure', p)),
    ...(c.errors ?? []).map((p) => problem('error', p)),
    ...(c.out?.length ? [`      <system-out>${escapeXmlText(c.out.join('\n'))}</system-out>`] : []),
  ];
  const open = `    <testcase${attrs(c.attrs)}`;
  return body.length === 0 ? `${open}/>` : `${open}>\n${body.join('\n')}\n    </testcase>`;
}

/**
 * The XML document. An empty suite is one self-closed element; an empty
 * root too, unless `openEmptyRoot` (the audit's, which has always been written open).
 */
export function junitXml(root: Attributes, suites: readonly JunitSuite[], openEmptyRoot = false): string {
  const xml = suites.map(
    (s) =>
      `  <testsuite${attrs(s.attrs)}` +
      (s.cases.length === 0 ? '/>' : `>\n${s.cases.map(caseXml).join('\n')}\n  </testsuite>`),
  );
  const document =
    xml.length === 0 && !openEmptyRoot
      ? `<testsuites${attrs(root)}/>`
      : [`<testsuites${attrs(root)}>`, ...xml, '</testsuites>'].join('\n');
  return ['<?xml version="1.0" encoding="UTF-8"?>', document].join('\n') + '\n';
}
