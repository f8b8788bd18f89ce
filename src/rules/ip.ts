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
const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4_STRICT = new RegExp(`^${OCTET}\\.${OCTET}\\.${OCTET}\\.${OCTET}$`);
const IPV6_CHARS = /^[0-9A-Fa-f:.]+$/;

const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

/**
 * Parses the 16-bit groups of an IPv6 address as Go does: at most one `::`,
 * 1–4 hex digits a group, an optional dotted IPv4 tail, no zone. Undefined when invalid.
 */
function ipv6Groups(text: string): number[] | undefined {
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
  // `::` stands for at least one group of zeros.
  if (missing < 1) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
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
  const v4 = IPV4_STRICT.exec(text);
  if (v4) {
    const value =
      ((Number(v4[1]) << 24) >>> 0) + (Number(v4[2]) << 16) + (Number(v4[3]) << 8) + Number(v4[4]);
    // Without leading zeros the text already is the canonical form.
    return { family: 'IPv4', bits: BigInt(value), canonical: text, mapped: false };
  }
  if (!text.includes(':') || !IPV6_CHARS.test(text)) return undefined;
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
