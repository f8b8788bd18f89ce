/**
 * The value helpers of the rules engine, as tables: which addresses count as
 * globally routable, IPv4-mapped IPv6 spellings, service CIDRs and their
 * errors, the set of service ranges (twins, families, terminating ranges, its
 * description and key), JSON text of decoded values and the quoting of values
 * in field errors.
 */
import { describe, expect, it } from 'vitest';
import { NO_VALUE, quote, renderFieldErrorBody } from '../../src/rules/field-error.js';
import { isGloballyRoutable, parseIP } from '../../src/rules/ip.js';
import { jsonText, plainText } from '../../src/rules/json-text.js';
import { parseCidr, ServiceRanges } from '../../src/rules/networks.js';
import { ranges } from '../kit/gateways.js';

const ip = (text: string) => {
  const parsed = parseIP(text);
  if (!parsed) throw new Error(`not an IP: ${text}`);
  return parsed;
};

describe('isGloballyRoutable', () => {
  it.each([
    ['8.8.8.8', true],
    ['11.0.0.1', true],
    ['9.255.255.255', true],
    ['10.0.0.1', false],
    ['10.255.255.255', false],
    ['172.16.0.1', false],
    ['172.31.255.255', false],
    ['172.15.255.255', true],
    ['172.32.0.0', true],
    ['192.168.1.1', false],
    ['192.169.0.1', true],
    ['192.167.255.255', true],
    ['127.0.0.1', false],
    ['100.64.0.1', false],
    ['192.0.2.1', false],
    ['2001:4860::8888', true],
    ['fc00::1', false],
    ['fdff:ffff::1', false],
    ['fe80::1', false],
    ['::1', false],
    ['2001:db8::1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:8.8.8.8', true],
  ] as const)('%s: %s', (text, global) => {
    expect(isGloballyRoutable(ip(text))).toBe(global);
  });
});

describe('parseIP: IPv4-mapped IPv6', () => {
  it.each([
    ['::ffff:10.0.0.1', { family: 'IPv4', canonical: '10.0.0.1', mapped: true }],
    ['0:0:0:0:0:ffff:a00:1', { family: 'IPv4', canonical: '10.0.0.1', mapped: true }],
    ['::fffe:a00:1', { family: 'IPv6', canonical: '::fffe:a00:1', mapped: false }],
    ['1::ffff:a00:1', { family: 'IPv6', canonical: '1::ffff:a00:1', mapped: false }],
    ['0:1::ffff:a00:1', { family: 'IPv6', canonical: '0:1::ffff:a00:1', mapped: false }],
    ['0:0:1::ffff:a00:1', { family: 'IPv6', mapped: false }],
    ['::1:0:ffff:a00:1', { family: 'IPv6', canonical: '::1:0:ffff:a00:1', mapped: false }],
    ['::1:ffff:a00:1', { family: 'IPv6', canonical: '::1:ffff:a00:1', mapped: false }],
    ['fd00::a', { family: 'IPv6', canonical: 'fd00::a', mapped: false }],
  ] as const)('%s', (text, want) => {
    expect(ip(text)).toMatchObject(want);
  });

  it('refuses text that cannot be an address', () => {
    expect(parseIP('1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17:18:19')).toBeUndefined();
    expect(parseIP(`::${'0'.repeat(44)}`)).toBeUndefined();
    expect(parseIP('0000:0000:0000:0000:0000:ffff:255.255.255.255')).toMatchObject({
      canonical: '255.255.255.255',
    });
    expect(parseIP('example.com')).toBeUndefined();
    expect(parseIP('::g')).toBeUndefined();
  });
});

describe('parseCidr', () => {
  it.each([
    ['10.96.0.0', '"10.96.0.0" is not a CIDR (expected address/prefix, e.g. 10.96.0.0/12)'],
    ['/12', '"/12" is not a valid CIDR'],
    ['10.96.0.0/012', '"10.96.0.0/012" is not a valid CIDR'],
    ['::ffff:10.96.0.0/108', '"::ffff:10.96.0.0/108" mixes IPv6 notation with an IPv4 network'],
    ['10.96.0.0/33', '"10.96.0.0/33" has a prefix longer than 32 bits'],
    ['fd00::/129', '"fd00::/129" has a prefix longer than 128 bits'],
    ['10.96.0.1/12', '"10.96.0.1/12" has host bits set; did you mean 10.96.0.0/12?'],
    ['fd00::1/112', '"fd00::1/112" has host bits set; did you mean fd00::/112?'],
  ])('%s: %s', (text, error) => {
    expect(parseCidr(text)).toBe(error);
  });

  it('a valid CIDR: canonical text, bounds, not terminating unless said, global or not', () => {
    expect(parseCidr('10.96.0.0/32')).toMatchObject({ cidr: '10.96.0.0/32', prefix: 32, terminating: false });
    expect(parseCidr('FD00::/128', true)).toMatchObject({
      cidr: 'fd00::/128',
      terminating: true,
      global: false,
    });
    expect(parseCidr('11.0.0.0/8')).toMatchObject({
      global: true,
      first: 11n << 24n,
      last: (12n << 24n) - 1n,
    });
  });
});

describe('ServiceRanges', () => {
  it('the same CIDR twice is one range, terminating only when both are', () => {
    const once = ranges({ cidr: '10.96.0.0/12', terminating: true }, '10.96.0.0/12');
    expect(once.key()).toBe('10.96.0.0/12');
    const both = ranges(
      { cidr: '10.96.0.0/12', terminating: true },
      { cidr: ' 10.96.0.0/12 ', terminating: true },
    );
    expect(both.key()).toBe('10.96.0.0/12(terminating)');
    expect(ranges('fd00::/112', '10.96.0.0/12', 'fd00::/112').key()).toBe('fd00::/112,10.96.0.0/12');
  });

  it('refuses a bad CIDR with its error', () => {
    expect(ServiceRanges.parse(['10.96.0.0/12', 'nope'])).toEqual({
      ok: false,
      error: '"nope" is not a CIDR (expected address/prefix, e.g. 10.96.0.0/12)',
    });
  });

  it('isEmpty, hasFamily (terminating ranges counted unless left out)', () => {
    expect(ServiceRanges.empty.isEmpty).toBe(true);
    const r = ranges('10.96.0.0/12', { cidr: 'fd00::/112', terminating: true });
    expect(r.isEmpty).toBe(false);
    expect(r.hasFamily('IPv4')).toBe(true);
    expect(r.hasFamily('IPv6')).toBe(true);
    expect(r.hasFamily('IPv6', false)).toBe(false);
    expect(r.hasFamily('IPv4', false)).toBe(true);
    expect(ranges('10.96.0.0/12').hasFamily('IPv6')).toBe(false);
  });

  it('containing: the ranges of the same family whose bounds hold the address', () => {
    const r = ranges('10.96.0.0/12', '10.96.0.0/16', 'fd00::/112');
    expect(r.containing(ip('10.96.0.1')).map((x) => x.cidr)).toEqual(['10.96.0.0/12', '10.96.0.0/16']);
    expect(r.containing(ip('10.97.0.1')).map((x) => x.cidr)).toEqual(['10.96.0.0/12']);
    expect(r.containing(ip('10.112.0.0')).map((x) => x.cidr)).toEqual([]);
    expect(r.containing(ip('10.95.255.255')).map((x) => x.cidr)).toEqual([]);
    expect(r.containing(ip('::ffff:10.96.0.1')).map((x) => x.cidr)).toEqual(['10.96.0.0/12', '10.96.0.0/16']);
  });

  it('describe: all, filtered, none, and past eight ranges', () => {
    const nine = ranges(...Array.from({ length: 9 }, (_, i) => `10.${i}.0.0/16`));
    expect(nine.describe()).toBe(
      '10.0.0.0/16, 10.1.0.0/16, 10.2.0.0/16, 10.3.0.0/16, 10.4.0.0/16, 10.5.0.0/16, 10.6.0.0/16, 10.7.0.0/16 and 1 more',
    );
    const eight = ranges(...Array.from({ length: 8 }, (_, i) => `10.${i}.0.0/16`));
    expect(eight.describe()).toBe(
      '10.0.0.0/16, 10.1.0.0/16, 10.2.0.0/16, 10.3.0.0/16, 10.4.0.0/16, 10.5.0.0/16, 10.6.0.0/16, 10.7.0.0/16',
    );
    expect(nine.describe((r) => r.cidr.startsWith('10.1.'))).toBe('10.1.0.0/16');
    expect(nine.describe(() => false)).toBe('none configured');
    expect(ServiceRanges.empty.describe()).toBe('none configured');
  });
});

describe('jsonText and plainText', () => {
  it.each([
    ['an array with holes and functions', [1, undefined, () => 1, 'a'], '[1,null,null,"a"]'],
    [
      'an object without undefined or function members',
      { a: 1, b: undefined, c: () => 1, d: null },
      '{"a":1,"d":null}',
    ],
    ['nested', { a: [{ b: [] }], c: {} }, '{"a":[{"b":[]}],"c":{}}'],
    ['a bigint', 12n, '12'],
    ['undefined', undefined, 'null'],
    ['a string', 'x"y', '"x\\"y"'],
  ] as const)('%s', (_name, value, text) => {
    expect(jsonText(value)).toBe(text);
  });

  it('renders an object nested 100,000 deep (JSON.stringify would overflow the stack)', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const text = jsonText(deep);
    expect(text).toHaveLength(100_000 * 6 + 1);
    expect(text.startsWith('{"a":{"a":')).toBe(true);
  });

  it('stops once past max characters', () => {
    expect(jsonText([1, 2, 3, 4, 5, 6], 3)).toBe('[1,2');
  });

  it('plainText: String() for primitives, capped JSON for the rest', () => {
    expect(plainText('x')).toBe('x');
    expect(plainText(null)).toBe('null');
    expect(plainText(5)).toBe('5');
    expect(plainText({ a: 1 })).toBe('{"a":1}');
    expect(plainText([11, 22, 33], 5)).toBe('[11,2...');
    expect(plainText([11, 22], 7)).toBe('[11,22]');
  });
});

describe('quote', () => {
  it('a string as Go %q, cut past max with "..." inside the quotes', () => {
    expect(quote('abc')).toBe('"abc"');
    expect(quote('abcd', 4)).toBe('"abcd"');
    expect(quote('abcde', 4)).toBe('"abcd..."');
  });

  it('renderFieldErrorBody leaves out an empty detail', () => {
    expect(renderFieldErrorBody({ type: 'FieldValueRequired', value: NO_VALUE, detail: '' })).toBe(
      'Required value',
    );
    expect(renderFieldErrorBody({ type: 'FieldValueInvalid', value: 'x', detail: '' })).toBe(
      'Invalid value: "x"',
    );
  });

  it('anything else as JSON, cut past max; undefined as null', () => {
    expect(quote(undefined)).toBe('null');
    expect(quote(5)).toBe('5');
    expect(quote([1, 2], 5)).toBe('[1,2]');
    expect(quote([1, 2, 3], 5)).toBe('[1,2,...');
  });
});
