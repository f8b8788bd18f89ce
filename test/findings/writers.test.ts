/**
 * The writers every report shares (findings/): escaping of the github and junit formats, lines
 * with and without a place, a Gateway's label; and the judging of one Gateway into its identity
 * and findings, which check and the audit both run.
 */
import { describe, expect, it } from 'vitest';
import { evaluateGateway } from '../../src/findings/evaluate.js';
import { escapeData, escapeProperty, githubOutput } from '../../src/findings/github.js';
import { escapeXmlAttribute, escapeXmlText } from '../../src/findings/junit.js';
import { gatewayLabel, plural, STDIN_DISPLAY, type ReportLine } from '../../src/findings/lines.js';
import { textOutput } from '../../src/findings/text.js';
import { baseGateway, context } from '../kit/gateways.js';

describe('github workflow commands', () => {
  it('escape data (%, CR, LF) and properties (also : and ,) as actions/toolkit does', () => {
    expect(escapeData('100% done\r\nnext')).toBe('100%25 done%0D%0Anext');
    expect(escapeProperty('dir,with:colon%/a.yaml')).toBe('dir%2Cwith%3Acolon%25/a.yaml');
  });
});

describe('junit XML', () => {
  it('escapes markup, quotes and characters XML cannot carry', () => {
    expect(escapeXmlText('a < b && c > d')).toBe('a &lt; b &amp;&amp; c &gt; d');
    expect(escapeXmlAttribute(`"x" 'y'\n\t<z>`)).toBe('&quot;x&quot; &apos;y&apos;&#10;&#9;&lt;z&gt;');
    expect(escapeXmlText('bell\u0007 nul\u0000 lone\uD800 pair\uD83D\uDE00')).toBe(
      'bell\uFFFD nul\uFFFD lone\uFFFD pair\uD83D\uDE00',
    );
  });
});

const violation = {
  severity: 'violation',
  check: 'spec',
  code: 'C',
  field: 'spec.addresses[0].value',
  message: 'spec.addresses[0].value: Invalid value: "x": no',
  warning: 'no',
} as const;
const warning = { ...violation, severity: 'warning', check: 'status' } as const;

/** One base set of lines: a placed violation, an unplaced warning, an input problem on stdin. */
const LINES: ReportLine[] = [
  {
    kind: 'finding',
    label: 'Gateway apps/gw',
    file: 'a.yaml',
    finding: { ...violation, position: { line: 3, column: 7 } },
  },
  { kind: 'finding', label: 'Gateway apps/gw', finding: warning },
  { kind: 'error', error: { code: 'InvalidYAML', file: STDIN_DISPLAY, position: undefined, message: 'bad' } },
];

describe('the line writers', () => {
  it('text: a place when the line has one, `warning:` for warnings, `error:` for input problems, then the summary', () => {
    expect(textOutput(LINES, 'summary')).toBe(
      [
        'a.yaml:3:7: Gateway apps/gw: spec.addresses[0].value: Invalid value: "x": no',
        'warning: Gateway apps/gw: spec.addresses[0].value: Invalid value: "x": no',
        '<stdin>: error: bad',
        'summary',
        '',
      ].join('\n'),
    );
  });

  it('github: file and position when known; an unplaced line and standard input annotate the run', () => {
    expect(githubOutput(LINES, 'summary').split('\n')).toEqual([
      '::error file=a.yaml,line=3,col=7,title=C::Gateway apps/gw: spec.addresses[0].value: Invalid value: "x": no',
      '::warning title=C::Gateway apps/gw: spec.addresses[0].value: Invalid value: "x": no',
      '::error title=InvalidYAML::bad',
      'summary',
      '',
    ]);
  });

  it.each([
    { namespace: 'apps', name: 'gw', label: 'Gateway apps/gw' },
    { namespace: undefined, name: 'gw', label: 'Gateway gw' },
    { namespace: '', name: 'gw', label: 'Gateway gw' },
    { namespace: 'apps', name: undefined, label: 'Gateway apps/<unnamed>' },
    { namespace: 'a b', name: 'line\nbreak', label: 'Gateway "a b"/"line\\nbreak"' },
  ])('labels $label', ({ namespace, name, label }) => {
    expect(gatewayLabel({ namespace, name })).toBe(label);
  });

  it('plural: one, many, and a given plural', () => {
    expect([plural(1, 'file'), plural(0, 'file'), plural(2, 'entry', 'entries')]).toEqual([
      '1 file',
      '0 files',
      '2 entries',
    ]);
  });
});

describe('evaluateGateway', () => {
  const object = {
    ...baseGateway({
      spec: [{ type: 'IPAddress', value: '192.0.2.1', routability: 'Cluster' }],
      status: [{ type: 'IPAddress', value: '10.96.0.10' }],
    }),
    metadata: { name: 'gw', namespace: 'apps', uid: 'u-1' },
  };

  it.each([
    { statusPolicy: 'warn', status: 'warning' },
    { statusPolicy: 'enforce', status: 'violation' },
  ] as const)(
    'returns who the Gateway is, its spec findings, its status findings ($status under status policy $statusPolicy), then the defaulting notice',
    ({ statusPolicy, status }) => {
      const judged = evaluateGateway(object, context({ statusPolicy }));
      expect({ namespace: judged.namespace, name: judged.name, uid: judged.uid }).toEqual({
        namespace: 'apps',
        name: 'gw',
        uid: 'u-1',
      });
      expect(judged.findings.map((f) => [f.check, f.severity, f.code, f.field])).toEqual([
        ['spec', 'violation', 'ClusterAddressOutsideServiceRange', 'spec.addresses[0].value'],
        ['status', status, 'ExternalAddressInsideServiceRange', 'status.addresses[0].value'],
        ['status', status, 'RoutabilityMismatch', 'status.addresses[0].routability'],
        ['status', 'warning', 'StatusDefaultedExternal', 'status.addresses[0]'],
      ]);
    },
  );

  it('a place function adds what the caller knows of each field', () => {
    const judged = evaluateGateway(object, context(), (field) => ({ where: `at ${field.toString()}` }));
    expect(judged.findings.length).toBeGreaterThan(0);
    for (const f of judged.findings) expect(f.where).toBe(`at ${f.field}`);
  });

  it('a Gateway without status is judged as a CREATE only', () => {
    const { status: _status, ...specOnly } = object;
    const judged = evaluateGateway(specOnly, context());
    expect(judged.findings.map((f) => f.check)).toEqual(['spec']);
  });
});
