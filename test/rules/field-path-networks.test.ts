import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { FieldPath } from '../../src/rules/field-path.js';
import { parseIP } from '../../src/rules/ip.js';
import { parseCidr, reservedKind, ServiceRanges } from '../../src/rules/networks.js';

describe('FieldPath', () => {
  it.each([
    [
      FieldPath.root('spec', 'addresses').index(0).child('value'),
      'spec.addresses[0].value',
      '/spec/addresses/0/value',
    ],
    [
      FieldPath.root('status', 'addresses').index(15).child('routability'),
      'status.addresses[15].routability',
      '/status/addresses/15/routability',
    ],
    [
      FieldPath.root('metadata', 'annotations').child('a/b~c'),
      'metadata.annotations.a/b~c',
      '/metadata/annotations/a~1b~0c',
    ],
    // Each character alone is escaped, and an escape already in the name is escaped again.
    [FieldPath.root('a~b').index(2), 'a~b[2]', '/a~0b/2'],
    [FieldPath.root('a/b').child('~1'), 'a/b.~1', '/a~1b/~01'],
  ])('renders %s both ways', (path, dotted, pointer) => {
    expect(path.toString()).toBe(dotted);
    expect(path.toPointer()).toBe(pointer);
  });
  it('finds the list entry a field belongs to', () => {
    expect(FieldPath.root('spec', 'addresses').index(3).child('value').upToFirstIndex().toString()).toBe(
      'spec.addresses[3]',
    );
    expect(FieldPath.root('spec').upToFirstIndex().toString()).toBe('spec');
  });
});

describe('parseIP (as strict as the apiserver)', () => {
  it.each([
    ['10.96.0.1', 'IPv4', '10.96.0.1'],
    ['255.255.255.255', 'IPv4', '255.255.255.255'],
    ['fd00:10:96::1', 'IPv6', 'fd00:10:96::1'],
    ['FD00:0010:0096:0000:0000:0000:0000:0001', 'IPv6', 'fd00:10:96::1'],
    ['::ffff:10.96.0.1', 'IPv4', '10.96.0.1'],
    ['::1', 'IPv6', '::1'],
  ])('%s → %s %s', (text, family, canonical) => {
    expect(parseIP(text)).toMatchObject({ family, canonical });
  });
  it.each([
    '010.96.0.1',
    '10.96.0',
    '10.96.0.256',
    '1.2.3.4.5',
    'fe80::1%eth0',
    '[::1]',
    '::ffff:010.1.1.1',
    '',
    ' 10.0.0.1',
    'x',
    '1:2:3:4:5:6:7:8:9',
  ])('rejects %j', (text) => expect(parseIP(text)).toBeUndefined());
});

describe('ServiceRanges', () => {
  it('parses, canonicalises and merges duplicates (terminating only if all are)', () => {
    const parsed = ServiceRanges.parse([
      { cidr: 'FD00:10:96::/112' },
      { cidr: '10.96.0.0/12', terminating: true },
      { cidr: '10.96.0.0/12' },
    ]);
    expect(parsed.ok && parsed.ranges.all.map((r) => [r.cidr, r.terminating])).toEqual([
      ['fd00:10:96::/112', false],
      ['10.96.0.0/12', false],
    ]);
  });
  it.each([
    ['10.96.0.1/12', /host bits set; did you mean 10.96.0.0\/12\?/],
    ['fd00:10:96::1/112', /did you mean fd00:10:96::\/112\?/],
    ['10.96.0.0', /not a CIDR/],
    ['10.96.0.0/33', /longer than 32 bits/],
    ['10.96.0.0/012', /not a valid CIDR/],
    ['nonsense/8', /not a valid CIDR/],
  ])('refuses %s with a clear reason', (cidr, reason) => {
    const parsed = ServiceRanges.parse([cidr]);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(reason);
  });
  it('describes long lists briefly', () => {
    const many = Array.from({ length: 10 }, (_, i) => `10.${i}.0.0/16`);
    const parsed = ServiceRanges.parse(many);
    expect(parsed.ok && parsed.ranges.describe()).toMatch(/, 10\.7\.0\.0\/16 and 2 more$/);
  });
  it('knows reserved addresses per range size', () => {
    const r = (cidr: string) => parseCidr(cidr) as Exclude<ReturnType<typeof parseCidr>, string>;
    const ip = (text: string) => parseIP(text)!;
    expect(reservedKind(ip('10.0.0.0'), r('10.0.0.0/24'))).toBe('network');
    expect(reservedKind(ip('10.0.0.255'), r('10.0.0.0/24'))).toBe('broadcast');
    expect(reservedKind(ip('10.0.0.1'), r('10.0.0.0/24'))).toBeUndefined();
    expect(reservedKind(ip('10.0.0.0'), r('10.0.0.0/32'))).toBeUndefined();
    // Both addresses of a /31 (and a /127) are usable (RFC 3021); a /30 has both reserved.
    expect(reservedKind(ip('10.0.0.0'), r('10.0.0.0/31'))).toBeUndefined();
    expect(reservedKind(ip('10.0.0.1'), r('10.0.0.0/31'))).toBeUndefined();
    expect(reservedKind(ip('10.0.0.3'), r('10.0.0.0/30'))).toBe('broadcast');
    expect(reservedKind(ip('fd00::'), r('fd00::/127'))).toBeUndefined();
    expect(reservedKind(ip('fd00::'), r('fd00::/126'))).toBe('network');
    expect(reservedKind(ip('fd00::'), r('fd00::/120'))).toBe('network');
    expect(reservedKind(ip('fd00::ff'), r('fd00::/120'))).toBeUndefined();
  });
});

describe('parseIP agrees with ipaddr.js on every valid IPv6 spelling', () => {
  // ipaddr.js reads the deprecated IPv4-compatible form `::1.2.3.4` as `::ffff:1.2.3.4`;
  // Go (and so the apiserver) does not, so dotted tails are checked by hand below.
  it('same canonical form and value (IPv4-mapped read as IPv4)', () => {
    fc.assert(
      fc.property(
        fc.ipV6().filter((t) => !t.includes('.')),
        fc.boolean(),
        (text, upper) => {
          const spelled = upper ? text.toUpperCase() : text;
          const ours = parseIP(spelled);
          const theirs = ipaddr.IPv6.parse(spelled);
          expect(ours).toBeDefined();
          if (theirs.isIPv4MappedAddress()) {
            expect(ours).toMatchObject({ family: 'IPv4', canonical: theirs.toIPv4Address().toString() });
          } else {
            expect(ours).toMatchObject({ family: 'IPv6', canonical: theirs.toRFC5952String() });
            const bits = theirs.toByteArray().reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
            expect(ours!.bits).toBe(bits);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
  it.each([
    '1::2::3',
    '1:2:3:4:5:6:7:8::',
    '::1:2:3:4:5:6:7:8',
    '12345::',
    ':1::',
    '1:2:3:4:5:6:7',
    'g::1',
    '::1.2.3.4.5',
  ])('rejects %j', (text) => expect(parseIP(text)).toBeUndefined());
});
