/**
 * parseIP reads texts by character codes since issue 25's fourth round. The
 * regular-expression reading it replaced is kept here as the reference: both
 * must give the same answer (undefined, or the same family, bits, canonical
 * text and mapped flag) for every text, valid or not.
 */
import { describe, expect, it } from 'vitest';
import { prng } from '../kit/fuzz.js';
import { parseIP, type ParsedIP } from '../../src/rules/ip.js';

// The reference: src/rules/ip.ts before the change, verbatim but for names.
const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4_STRICT = new RegExp(`^${OCTET}\\.${OCTET}\\.${OCTET}\\.${OCTET}$`);
const IPV6_CHARS = /^[0-9A-Fa-f:.]+$/;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

function referenceGroups(text: string): number[] | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    const pieces = part.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (i === pieces.length - 1 && piece.includes('.')) {
        const v4 = IPV4_STRICT.exec(piece);
        if (!v4) return undefined;
        out.push((Number(v4[1]) << 8) | Number(v4[2]), (Number(v4[3]) << 8) | Number(v4[4]));
      } else if (HEX_GROUP.test(piece)) out.push(parseInt(piece, 16));
      else return undefined;
    }
    return out;
  };
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/** What the reference decides: the family, bits and groups (canonical text comes from the shared formatter). */
function reference(text: string): Pick<ParsedIP, 'family' | 'bits' | 'mapped'> | undefined {
  if (text.length > 45) return undefined;
  const v4 = IPV4_STRICT.exec(text);
  if (v4) {
    const value =
      ((Number(v4[1]) << 24) >>> 0) + (Number(v4[2]) << 16) + (Number(v4[3]) << 8) + Number(v4[4]);
    return { family: 'IPv4', bits: BigInt(value), mapped: false };
  }
  if (!text.includes(':') || !IPV6_CHARS.test(text)) return undefined;
  const groups = referenceGroups(text);
  if (!groups) return undefined;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff)
    return { family: 'IPv4', bits: BigInt(((groups[6]! << 16) >>> 0) + groups[7]!), mapped: true };
  let hex = '0x';
  for (const g of groups) hex += g.toString(16).padStart(4, '0');
  return { family: 'IPv6', bits: BigInt(hex), mapped: false };
}

/** Texts near the valid forms: IPv4, IPv6 with and without `::` and a dotted tail, then mutated. */
function texts(count: number): string[] {
  // Deterministic (mulberry32), so a failure names a text that reproduces.
  const next = prng(5093);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const octet = () => pick(['0', '00', '01', '9', '10', '99', '100', '199', '255', '256', '300', '2555', '']);
  const group = () =>
    pick(['0', '00', '0000', '1', 'a', 'F', 'ffff', 'FFFF', '10', 'fd00', '12345', 'g', '']);
  const v4 = () => [octet(), octet(), octet(), octet()].slice(0, pick([3, 4, 4, 4, 5])).join('.');
  const v6 = () => {
    const n = pick([1, 2, 3, 5, 6, 7, 8, 9]);
    const groups = Array.from({ length: n }, group);
    if (next() < 0.3) groups[n - 1] = v4();
    let text = groups.join(':');
    if (next() < 0.6) {
      const at = Math.floor(next() * (text.length + 1));
      text = text.slice(0, at) + pick(['::', ':::', '::', ':']) + text.slice(at);
    }
    return text;
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let text = pick([v4, v6, v6])();
    if (next() < 0.25) {
      const at = Math.floor(next() * (text.length + 1));
      text =
        text.slice(0, at) + pick(['.', ':', ' ', '%eth0', 'x', '1', '0', '[', '::ffff:']) + text.slice(at);
    }
    out.push(text);
  }
  return out;
}

describe('parseIP by character codes decides as the regular expressions did', () => {
  it.each([
    '10.96.0.1',
    '0.0.0.0',
    '255.255.255.255',
    '::',
    '::1',
    '1::',
    ':::',
    '::::',
    ':::1',
    '1:::',
    '1::2::3',
    '1.2.3.4::',
    '::1.2.3.4',
    '::ffff:10.96.0.1',
    '::ffff:010.96.0.1',
    '1:2:3:4:5:6:1.2.3.4',
    '1:2:3:4:5:6:7:1.2.3.4',
    '1:2:3:4:5:6:7:8',
    '1:2:3:4:5:6:7:8:9',
    'FD00:0010:0096:0000:0000:0000:0000:0001',
    '1.2.3.4:1::',
    '1::1.2.3',
    '12345::',
    '',
    ' 10.0.0.1',
    '10.0.0.1 ',
    '10.0.0.1\n',
    '1e2.1.1.1',
  ])('%j', (text) => {
    const got = parseIP(text);
    expect(got && { family: got.family, bits: got.bits, mapped: got.mapped }).toEqual(reference(text));
  });

  it('on 30,000 generated texts near the valid forms', () => {
    const differ: string[] = [];
    let valid = 0;
    for (const text of texts(30_000)) {
      const got = parseIP(text);
      const want = reference(text);
      if (want) valid++;
      const same =
        got === undefined
          ? want === undefined
          : want !== undefined &&
            got.family === want.family &&
            got.bits === want.bits &&
            got.mapped === want.mapped;
      if (!same) differ.push(text);
    }
    expect(differ.slice(0, 10)).toEqual([]);
    // The generator reaches both answers often enough to mean something.
    expect(valid).toBeGreaterThan(1_000);
  });
});
