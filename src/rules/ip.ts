import ipaddr from 'ipaddr.js';

export type IPFamily = 'IPv4' | 'IPv6';

/** An IP address parsed once: its family, its 32/128-bit value and its canonical text. */
export interface ParsedIP {
  readonly family: IPFamily;
  readonly bits: bigint;
  /** Canonical form, as Kubernetes names IPAddress objects (RFC 5952 for IPv6). */
  readonly canonical: string;
  /** True for an IPv4-mapped IPv6 text (`::ffff:10.96.0.5`), read as the IPv4 address it carries. */
  readonly mapped: boolean;
}

// Go's net.ParseIP, which the apiserver's `format: ipv4|ipv6` uses, rejects leading
// zeros (ambiguous octal) and zones; ipaddr.js and net.isIP accept some of them.
// Parsed by character codes, without regular expressions, splits or arrays of pieces: this
// runs for every address of every review (a third of the rules' time on a 16-address update
// when it used regular expressions). test/rules/ip-parse.test.ts holds the regular-expression
// reading it replaced and compares the two on generated texts.

const DOT = 0x2e;
const COLON = 0x3a;

/** The value of a hex digit's character code, or -1. */
function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x61 && code <= 0x66) return code - 0x57; // a-f
  if (code >= 0x41 && code <= 0x46) return code - 0x37; // A-F
  return -1;
}

/**
 * A dotted quad filling text[from, to) exactly: four decimal octets of 1 to 3
 * digits, none above 255, no leading zero; its 32-bit value, or -1.
 */
function ipv4Value(text: string, from: number, to: number): number {
  let value = 0;
  let at = from;
  for (let octet = 0; octet < 4; octet++) {
    if (octet > 0) {
      if (at >= to || text.charCodeAt(at) !== DOT) return -1;
      at++;
    }
    const first = at;
    let n = 0;
    while (at < to && at - first < 3) {
      const digit = text.charCodeAt(at) - 0x30;
      if (digit < 0 || digit > 9) break;
      n = n * 10 + digit;
      at++;
    }
    const digits = at - first;
    if (digits === 0 || n > 255 || (digits > 1 && text.charCodeAt(first) === 0x30)) return -1;
    value = octet === 0 ? n : value * 256 + n;
  }
  return at === to ? value : -1;
}

/**
 * Appends the groups of one side of `::` (text[from, to), colon-separated, 1–4
 * hex digits each; the last may be a dotted quad, two groups) to `out`.
 * False when a piece is neither.
 */
function pushGroups(text: string, from: number, to: number, out: number[]): boolean {
  if (from === to) return true;
  let start = from;
  for (;;) {
    let end = start;
    while (end < to && text.charCodeAt(end) !== COLON) end++;
    const last = end === to;
    let dotted = false;
    if (last) for (let i = start; i < end && !dotted; i++) dotted = text.charCodeAt(i) === DOT;
    if (dotted) {
      const v4 = ipv4Value(text, start, end);
      if (v4 < 0) return false;
      out.push(Math.floor(v4 / 65536), v4 % 65536);
    } else {
      const digits = end - start;
      if (digits < 1 || digits > 4) return false;
      let group = 0;
      for (let i = start; i < end; i++) {
        const d = hexDigit(text.charCodeAt(i));
        if (d < 0) return false;
        group = group * 16 + d;
      }
      out.push(group);
    }
    if (last) return true;
    start = end + 1;
  }
}

/**
 * Parses the 16-bit groups of an IPv6 address as Go does: at most one `::`,
 * 1–4 hex digits a group, an optional dotted IPv4 tail, no zone. Undefined when invalid.
 */
function ipv6Groups(text: string): number[] | undefined {
  const gap = text.indexOf('::');
  if (gap >= 0 && text.indexOf('::', gap + 2) >= 0) return undefined;
  const head: number[] = [];
  if (!pushGroups(text, 0, gap < 0 ? text.length : gap, head)) return undefined;
  if (gap < 0) return head.length === 8 ? head : undefined;
  const tail: number[] = [];
  if (!pushGroups(text, gap + 2, text.length, tail)) return undefined;
  const missing = 8 - head.length - tail.length;
  // `::` stands for at least one group of zeros.
  if (missing < 1) return undefined;
  for (let i = 0; i < missing; i++) head.push(0);
  for (const g of tail) head.push(g);
  return head;
}

/** True when every character is a hex digit, `:` or `.` (and there is one). */
function ipv6Chars(text: string): boolean {
  if (text.length === 0) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== COLON && c !== DOT && hexDigit(c) < 0) return false;
  }
  return true;
}

/** RFC 5952: lower case, no leading zeros, the longest run (≥ 2) of zero groups as `::`. */
function formatIPv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/**
 * Parses an IP address as strictly as the apiserver does, or returns undefined.
 * IPv4-mapped IPv6 addresses (`::ffff:10.96.0.5`) are read as the IPv4 address
 * they carry, as Go's IPNet.Contains does. This runs for every address of every
 * review, so it works on the text directly, with no intermediate objects.
 */
export function parseIP(text: string): ParsedIP | undefined {
  if (text.length > 45) return undefined;
  const v4 = ipv4Value(text, 0, text.length);
  // Without leading zeros the text already is the canonical form.
  if (v4 >= 0) return { family: 'IPv4', bits: BigInt(v4), canonical: text, mapped: false };
  if (!text.includes(':') || !ipv6Chars(text)) return undefined;
  const groups = ipv6Groups(text);
  if (!groups) return undefined;
  if (
    groups[0] === 0 &&
    groups[1] === 0 &&
    groups[2] === 0 &&
    groups[3] === 0 &&
    groups[4] === 0 &&
    groups[5] === 0xffff
  ) {
    const value = ((groups[6]! << 16) >>> 0) + groups[7]!;
    return {
      family: 'IPv4',
      bits: BigInt(value),
      canonical: `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`,
      mapped: true,
    };
  }
  // One BigInt parse of 32 hex digits is cheaper than eight shifts of BigInts.
  let hex = '0x';
  for (const g of groups) hex += g.toString(16).padStart(4, '0');
  return { family: 'IPv6', bits: BigInt(hex), canonical: formatIPv6(groups), mapped: false };
}

/** RFC 1918 and RFC 4193 space, the usual home of service ranges: never globally routable. */
function isPrivate(ip: ParsedIP): boolean {
  if (ip.family === 'IPv4') {
    const n = Number(ip.bits);
    return n >>> 24 === 10 || n >>> 20 === 0xac1 || n >>> 16 === 0xc0a8;
  }
  return ip.bits >> 121n === 0x7en; // fc00::/7
}

/** True when the address is globally routable (not private, ULA, loopback, documentation, …). */
export function isGloballyRoutable(ip: ParsedIP): boolean {
  return !isPrivate(ip) && ipaddr.parse(ip.canonical).range() === 'unicast';
}
