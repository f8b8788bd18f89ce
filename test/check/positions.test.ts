/** Line and column of findings: the deep multi-document case end to end, and the locator's rules. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDocuments } from '../../src/check/documents.js';
import { locateField } from '../../src/check/locate.js';
import { checkSource } from '../../src/check/run.js';
import { decodeText, SourceText } from '../../src/check/source.js';
import { ruleContext, ruleSettingsFrom } from '../../src/config/rule-settings.js';
import { ServiceRanges } from '../../src/rules/index.js';
import { check, MANIFESTS, RANGES } from './support.js';

/** Line and column of the first occurrence of `needle` after `from`, computed without the yaml package. */
function whereIs(text: string, needle: string, from = 0): { line: number; column: number } {
  const at = text.indexOf(needle, from);
  if (at < 0) throw new Error(`${needle} not found`);
  const before = text.slice(0, at);
  return { line: before.split('\n').length, column: at - (before.lastIndexOf('\n') + 1) + 1 };
}

function ctx() {
  const settings = ruleSettingsFrom({
    'service-cidr': ['10.96.0.0/12'],
    'cluster-domain': 'cluster.local',
    'spec-policy': 'enforce',
    'status-policy': 'warn',
    'gep-revision': 'auto',
  });
  if (!settings.ok) throw new Error(settings.error);
  const ranges = ServiceRanges.parse(['10.96.0.0/12']);
  if (!ranges.ok) throw new Error(ranges.error);
  return ruleContext(settings.value, ranges.ranges);
}

function locate(yaml: string, segments: (string | number)[]): { line: number; column: number } {
  const source = new SourceText('x.yaml', yaml);
  const [doc] = readDocuments(yaml);
  return source.position(locateField(doc!.contents!, segments, doc!.doc));
}

describe('a violation deep in a multi-document file', () => {
  it('points at the offending value in the fourth document of gateways.yaml', async () => {
    const text = readFileSync(join(MANIFESTS, 'gateways.yaml'), 'utf8');
    const fourth = text.split('\n---\n').slice(0, 4).join('\n---\n').length;
    const expected = whereIs(text, '192.168.1.5', fourth);
    expect(expected.line).toBeGreaterThan(60);
    const r = await check(['-f', 'manifests/gateways.yaml', ...RANGES, '-o', 'json']);
    const gateway = JSON.parse(r.stdout).files[0].gateways.find(
      (g: { name: string }) => g.name === 'internal',
    );
    expect(gateway.document).toBe(4);
    const finding = gateway.findings.find((f: { field: string }) => f.field === 'spec.addresses[1].value');
    expect({ line: finding.line, column: finding.column }).toEqual(expected);
    // and the routability typo in the next entry, at its value
    const typo = gateway.findings.find((f: { field: string }) => f.field === 'spec.addresses[2].routability');
    expect({ line: typo.line, column: typo.column }).toEqual(whereIs(text, 'cluster\n', fourth));
  });

  it('points into the right List item', async () => {
    const text = readFileSync(join(MANIFESTS, 'list.yaml'), 'utf8');
    const r = await check(['-f', 'manifests/list.yaml', ...RANGES, '-o', 'json']);
    const [first, second] = JSON.parse(r.stdout).files[0].gateways.filter(
      (g: { findings: unknown[] }) => g.findings.length > 0,
    );
    expect(first.items).toEqual([2]);
    expect({ line: first.findings[0].line, column: first.findings[0].column }).toEqual(
      whereIs(text, '10.96.0.0'),
    );
    expect(second.document).toBe(2);
    expect({ line: second.findings[0].line, column: second.findings[0].column }).toEqual(
      whereIs(text, '2001:db8::1'),
    );
  });
});

describe('locateField', () => {
  const yaml = [
    'apiVersion: gateway.networking.k8s.io/v1', // 1
    'kind: Gateway', // 2
    'spec:', // 3
    '  addresses:', // 4
    '    - type: IPAddress', // 5
    '      value: 10.0.0.1', // 6
    '    - {type: Hostname, value: "a.example.com"}', // 7
    '    - type: IPAddress', // 8
    '      value:', // 9
    '      routability: Cluster', // 10
  ].join('\n');

  it('a scalar value: at the value', () =>
    expect(locate(yaml, ['spec', 'addresses', 0, 'value'])).toEqual({ line: 6, column: 14 }));
  it('a flow mapping entry: at its quoted value', () =>
    expect(locate(yaml, ['spec', 'addresses', 1, 'value'])).toEqual({ line: 7, column: 31 }));
  it('a list entry: at the entry', () =>
    expect(locate(yaml, ['spec', 'addresses', 2])).toEqual({ line: 8, column: 7 }));
  it('a block collection: at its key', () =>
    expect(locate(yaml, ['spec', 'addresses'])).toEqual({ line: 4, column: 3 }));
  it('an empty value: at its key', () =>
    expect(locate(yaml, ['spec', 'addresses', 2, 'value'])).toEqual({ line: 9, column: 7 }));
  it('a missing field: at the nearest ancestor that exists', () => {
    expect(locate(yaml, ['spec', 'addresses', 0, 'routability'])).toEqual({ line: 5, column: 7 });
    expect(locate(yaml, ['spec', 'addresses', 9, 'value'])).toEqual({ line: 4, column: 3 });
    expect(locate(yaml, ['status', 'addresses', 0])).toEqual({ line: 1, column: 1 });
  });
  it('through an alias: at the anchored node', () => {
    const anchored = 'a: &x\n  value: 10.0.0.1\nspec:\n  addresses:\n    - *x\n';
    expect(locate(anchored, ['spec', 'addresses', 0])).toEqual({ line: 5, column: 7 });
    expect(locate(anchored, ['spec', 'addresses', 0, 'value'])).toEqual({ line: 2, column: 10 });
  });
});

describe('SourceText', () => {
  it('counts CRLF files by line like editors do', () => {
    const text = 'a: 1\r\nb:\r\n  c: 10.0.0.1\r\n';
    expect(new SourceText('x', text).position(text.indexOf('10.0'))).toEqual({ line: 3, column: 6 });
  });
  it('drops a UTF-8 byte-order mark', () => {
    expect(decodeText(Buffer.from('\uFEFFkind: Gateway', 'utf8'))).toBe('kind: Gateway');
  });
  it('clamps offsets to the text', () => {
    const s = new SourceText('x', 'a\nb');
    expect(s.position(-5)).toEqual({ line: 1, column: 1 });
    expect(s.position(99)).toEqual({ line: 2, column: 2 });
  });
});

describe('checkSource', () => {
  it('places findings in JSON input with tabs as well', () => {
    const text =
      '{\n\t"apiVersion": "gateway.networking.k8s.io/v1",\n\t"kind": "Gateway",\n\t"metadata": {"name": "j"},\n\t"spec": {"addresses": [{"value": "10.96.0.1", "routability": "External"}]}\n}\n';
    const report = checkSource(new SourceText('j.json', text), ctx());
    expect(report.errors).toEqual([]);
    expect(report.gateways[0]!.findings[0]!.position).toEqual(whereIs(text, '"10.96.0.1"'));
  });

  it('reports an alias bomb as an input error instead of expanding it', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 12; i++)
      lines.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    const text = `apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: bomb}\n${lines.join('\n')}\n`;
    const report = checkSource(new SourceText('bomb.yaml', text), ctx());
    expect(report.gateways).toEqual([]);
    expect(report.errors).toMatchObject([{ code: 'InvalidYAML', position: { line: 1, column: 1 } }]);
  });
});
