/**
 * The Kubernetes CEL environment of test/kit/kube-cel.ts, checked against
 * the examples of the Kubernetes documentation (IP address and CIDR
 * libraries) and against upstream's own CRD rule for GEP-5093's experimental
 * revision, run over upstream's 16-value table
 * (test/fixtures/upstream/gep-5093-upstream: kubernetes-sigs/gateway-api
 * tests/cel/gateway_experimental_test.go, Apache-2.0, LICENSE beside it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UPSTREAM_ROUTABILITY_RULE } from '../../src/crd/schemas.js';
import { evalKubeCel, plain } from '../kit/kube-cel.js';

const value = (expression: string, bindings: Record<string, unknown> = {}) => {
  const out = evalKubeCel(expression, bindings);
  if (!out.ok) throw new Error(`${expression}: ${out.error}`);
  return plain(out.value);
};

describe('Kubernetes IP library (documented examples)', () => {
  it.each([
    ["isIP('127.0.0.1')", true],
    ["isIP('::1')", true],
    ["isIP('2001:db8::abcd')", true],
    ["isIP('127.0.0.256')", false],
    ["isIP('010.0.0.1')", false],
    ["isIP('::ffff:127.0.0.1')", false],
    ["isIP('::ffff:7f00:1')", false],
    ["isIP('fe80::1%en0')", false],
    ["isIP('10.0.0.0/8')", false],
    ["ip('127.0.0.1').family()", 4n],
    ["ip('::1').family()", 6n],
    ["ip('127.0.0.1').isLoopback()", true],
    ["ip('::1').isLoopback()", true],
    ["ip('0.0.0.0').isUnspecified()", true],
    ["ip('::').isUnspecified()", true],
    ["ip('169.254.1.1').isLinkLocalUnicast()", true],
    ["ip('fe80::1').isLinkLocalUnicast()", true],
    ["ip('224.0.0.1').isLinkLocalMulticast()", true],
    ["ip('ff02::1').isLinkLocalMulticast()", true],
    ["ip('192.168.0.1').isGlobalUnicast()", true],
    ["ip('2001:db8::1').isGlobalUnicast()", true],
    ["ip('255.255.255.255').isGlobalUnicast()", false],
    ["ip('ff00::1').isGlobalUnicast()", false],
    ["ip.isCanonical('2001:db8::abcd')", true],
    ["ip.isCanonical('2001:DB8::ABCD')", false],
    ["ip.isCanonical('2001:db8:0:0:0:0:0:abcd')", false],
    ["string(ip('2001:DB8:0:0:0::1'))", '2001:db8::1'],
    ["ip('10.0.0.1') == ip('10.0.0.1')", true],
    ["ip('::1') == ip('0:0::1')", true],
    ["ip('10.0.0.1') == ip('10.0.0.2')", false],
  ] as const)('%s is %s', (expression, want) => {
    expect(value(expression)).toBe(want);
  });

  it('ip() of a bad address is an error, not a value', () => {
    for (const text of ['1.2.3', '::ffff:1.2.3.4', 'fe80::1%eth0', 'x'])
      expect(evalKubeCel(`ip('${text}')`, {}).ok, text).toBe(false);
  });
});

describe('Kubernetes CIDR library (documented examples)', () => {
  it.each([
    ["isCIDR('192.168.0.0/16')", true],
    ["isCIDR('192.168.0.1/16')", true],
    ["isCIDR('192.168.0.0/33')", false],
    ["isCIDR('192.168.0.0/016')", false],
    ["isCIDR('::ffff:10.0.0.0/104')", false],
    ["isCIDR('10.0.0.1')", false],
    ["cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", true],
    ["cidr('192.168.0.0/24').containsIP('192.168.1.1')", false],
    ["cidr('192.168.0.0/24').containsIP('::1')", false],
    ["cidr('fd00::/112').containsIP('fd00::ffff')", true],
    ["cidr('192.168.0.0/24').containsCIDR('192.168.0.0/25')", true],
    ["cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/23'))", false],
    ["cidr('192.168.0.1/24').ip() == ip('192.168.0.1')", true],
    ["cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')", true],
    ["cidr('192.168.0.0/24').ip().family()", 4n],
    ["cidr('::1/128').prefixLength()", 128n],
    ["string(cidr('fd00:0:0::/112'))", 'fd00::/112'],
    ["string(cidr('10.1.2.3/8').masked())", '10.0.0.0/8'],
  ] as const)('%s is %s', (expression, want) => {
    expect(value(expression)).toBe(want);
  });
});

describe('strings and standard library as the API server has them', () => {
  it('split, lowerAscii, matches, and has() on plain objects', () => {
    expect(value("'a,b,,c'.split(',')")).toEqual(['a', 'b', '', 'c']);
    expect(value("'GW.Cluster.LOCAL'.lowerAscii()")).toBe('gw.cluster.local');
    expect(value("'example.com/x'.matches('^[a-z.]+/.+$')")).toBe(true);
    expect(value('has(o.a) && !has(o.b)', { o: { a: 1 } })).toBe(true);
  });

  it('selecting a missing key is an error (so the policy guards every optional field)', () => {
    expect(evalKubeCel('o.b == 1', { o: {} }).ok).toBe(false);
    expect(evalKubeCel('false && o.b == 1', { o: {} }).ok).toBe(true);
  });
});

interface UpstreamCase {
  readonly routability: string;
  readonly crdAccepts: boolean;
}
const TABLE = JSON.parse(
  readFileSync(
    join(import.meta.dirname, '..', 'fixtures', 'upstream', 'gep-5093-upstream', 'crd-validation-cases.json'),
    'utf8',
  ),
) as { cases: UpstreamCase[] };

describe("upstream's CRD rule (experimental revision) under the real evaluator", () => {
  it('the table has its 16 values, both ways', () => {
    expect(TABLE.cases).toHaveLength(16);
    expect(TABLE.cases.some((c) => c.crdAccepts)).toBe(true);
    expect(TABLE.cases.some((c) => !c.crdAccepts)).toBe(true);
  });

  it('accepts a 64-character prefix label (no per-label cap: the engine and the policy agree, docs/dev/decisions.md)', () => {
    expect(value(UPSTREAM_ROUTABILITY_RULE, { self: `${'a'.repeat(64)}.example.com/Wan` })).toBe(true);
    expect(value(UPSTREAM_ROUTABILITY_RULE, { self: 'Example.com/Wan' })).toBe(false);
  });

  it.each(TABLE.cases)('$routability: accepted exactly when upstream says ($crdAccepts)', (c) => {
    expect(value(UPSTREAM_ROUTABILITY_RULE, { self: c.routability })).toBe(c.crdAccepts);
  });
});
