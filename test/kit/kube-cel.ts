/**
 * Kubernetes' CEL environment on a real CEL evaluator (`@bufbuild/cel`), for
 * tests: the standard library plus the extension functions the API server
 * adds that our CEL uses, written here from the Kubernetes documentation
 * ("Common Expression Language in Kubernetes": IP address library, CIDR
 * library, strings, format) and the behaviour of k8s.io/apiserver's
 * pkg/cel/library (ip.go, cidr.go, format.go):
 *
 * - `isIP(string)`, `ip(string)`, `ip.isCanonical(string)`; on an IP:
 *   `family()`, `isUnspecified()`, `isLoopback()`, `isLinkLocalMulticast()`,
 *   `isLinkLocalUnicast()`, `isGlobalUnicast()`, `string(ip)`, `==`.
 *   Parsing is Go's `netip.ParseAddr` with zones and IPv4-mapped IPv6
 *   addresses (any spelling) refused, as the library does.
 * - `isCIDR(string)`, `cidr(string)`; on a CIDR: `containsIP(ip|string)`,
 *   `containsCIDR(cidr|string)`, `ip()`, `masked()`, `prefixLength()`,
 *   `string(cidr)`. `netip.ParsePrefix`: host bits may be set (`masked()`
 *   clears them), the prefix length is decimal without leading zeros.
 * - strings: cel-go's `ext.Strings` (`split`, `lowerAscii`, `indexOf`, …)
 *   from `@bufbuild/cel/ext`.
 * - `format.dns1123Subdomain().validate(s)` returning a list of errors (empty
 *   when valid) with `hasValue()` on it, the shape upstream's CRD rule uses.
 *
 * Kubernetes' opaque IP and CIDR values are carried as one-key maps
 * (`{'k8s.ip': canonical}`), so `==` compares them as the library does.
 * Optional types (`?.`, `optional.of`) are not supported by the evaluator;
 * the generated policy does not use them.
 */
import {
  celFunc,
  celMethod,
  CelScalar,
  isCelError,
  isCelMap,
  listType,
  mapType,
  celEnv,
  parse,
  plan,
  type CelFunc,
  type CelMap,
  type CelValue,
} from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import ipaddr from 'ipaddr.js';

/** An address as Go's netip.Addr holds it: family and 32/128-bit value. */
export interface Addr {
  readonly family: 4 | 6;
  readonly bits: bigint;
}

const V4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** netip.ParseAddr for IPv4: four decimal fields 0–255, no leading zeros. */
function parseV4(text: string): bigint | undefined {
  const m = V4.exec(text);
  if (!m) return undefined;
  let bits = 0n;
  for (const field of m.slice(1)) {
    if (field.length > 1 && field.startsWith('0')) return undefined;
    const n = Number(field);
    if (n > 255) return undefined;
    bits = (bits << 8n) | BigInt(n);
  }
  return bits;
}

/** netip.ParseAddr for IPv6: hex groups of 1–4 digits, one `::`, an optional IPv4 tail; no zone here. */
function parseV6(text: string): bigint | undefined {
  if (!/^[0-9A-Fa-f:.]+$/.test(text)) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string, last: boolean): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    const pieces = part.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (last && i === pieces.length - 1 && piece.includes('.')) {
        const v4 = parseV4(piece);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9A-Fa-f]{1,4}$/.test(piece)) out.push(parseInt(piece, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? groups(halves[1]!, true) : [];
  if (!head || !tail) return undefined;
  let all: number[];
  if (halves.length === 1) {
    if (head.length !== 8) return undefined;
    all = head;
  } else {
    const missing = 8 - head.length - tail.length;
    if (missing < 1) return undefined;
    all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  }
  return all.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

const MAPPED_PREFIX = 0xffffn << 32n;

/** Kubernetes' parseIPAddr: netip.ParseAddr, then no zone and no IPv4-mapped IPv6 address. */
export function parseAddr(text: string): Addr | string {
  if (text.includes('%')) return `IP address ${JSON.stringify(text)} with zone value is not allowed`;
  const v4 = parseV4(text);
  if (v4 !== undefined) return { family: 4, bits: v4 };
  const v6 = text.includes(':') ? parseV6(text) : undefined;
  if (v6 === undefined) return `IP Address ${JSON.stringify(text)} parse error during conversion from string`;
  if (v6 >> 32n === MAPPED_PREFIX >> 32n)
    return `IPv4-mapped IPv6 address ${JSON.stringify(text)} is not allowed`;
  return { family: 6, bits: v6 };
}

/** netip.Addr.String(): dotted IPv4; RFC 5952 IPv6 (ipaddr.js's formatter, independent of the engine's). */
export function formatAddr(a: Addr): string {
  if (a.family === 4) return [24n, 16n, 8n, 0n].map((s) => String((a.bits >> s) & 255n)).join('.');
  const bytes: number[] = [];
  for (let s = 120n; s >= 0n; s -= 8n) bytes.push(Number((a.bits >> s) & 255n));
  return (ipaddr.fromByteArray(bytes) as ipaddr.IPv6).toRFC5952String();
}

export interface Prefix {
  readonly addr: Addr;
  readonly bits: number;
}

/** Kubernetes' parseCIDR: netip.ParsePrefix, then no zone and no IPv4-mapped IPv6 address. */
export function parsePrefix(text: string): Prefix | string {
  const slash = text.lastIndexOf('/');
  const bad = `CIDR ${JSON.stringify(text)} parse error during conversion from string`;
  if (slash < 0) return bad;
  const addr = parseAddr(text.slice(0, slash));
  if (typeof addr === 'string') return addr.includes('not allowed') ? addr : bad;
  const length = text.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/.test(length)) return bad;
  const bits = Number(length);
  if (bits > (addr.family === 4 ? 32 : 128)) return bad;
  return { addr, bits };
}

const width = (a: Addr) => (a.family === 4 ? 32 : 128);

function maskedBits(p: Prefix): bigint {
  const host = BigInt(width(p.addr) - p.bits);
  return (p.addr.bits >> host) << host;
}

function prefixContains(p: Prefix, a: Addr): boolean {
  if (a.family !== p.addr.family) return false;
  const host = BigInt(width(a) - p.bits);
  return a.bits >> host === p.addr.bits >> host;
}

const IP_KEY = 'k8s.ip';
const CIDR_KEY = 'k8s.cidr';

const ipValue = (a: Addr) => ({ [IP_KEY]: formatAddr(a) });
const cidrValue = (p: Prefix) => ({ [CIDR_KEY]: `${formatAddr(p.addr)}/${p.bits}` });

function mustAddr(text: string): Addr {
  const a = parseAddr(text);
  if (typeof a === 'string') throw new Error(a);
  return a;
}

function mustPrefix(text: string): Prefix {
  const p = parsePrefix(text);
  if (typeof p === 'string') throw new Error(p);
  return p;
}

/** The address an IP value stands for; throws (a CEL error) for any other map. */
function addrOf(value: CelMap): Addr {
  const text = value.get(IP_KEY);
  if (typeof text !== 'string' || value.size !== 1) throw new Error('no such overload: not an IP');
  return mustAddr(text);
}

function prefixOf(value: CelMap): Prefix {
  const text = value.get(CIDR_KEY);
  if (typeof text !== 'string' || value.size !== 1) throw new Error('no such overload: not a CIDR');
  return mustPrefix(text);
}

const MAP = mapType(CelScalar.STRING, CelScalar.DYN);

/** Go's netip classifications, by family. */
function classify(a: Addr) {
  const v4 = a.family === 4;
  const n = a.bits;
  const unspecified = n === 0n;
  const loopback = v4 ? n >> 24n === 127n : n === 1n;
  const multicast = v4 ? n >> 28n === 0xen : n >> 120n === 0xffn;
  const linkLocalUnicast = v4 ? n >> 16n === 0xa9fen : n >> 118n === 0x3fan;
  const linkLocalMulticast = v4 ? n >> 8n === 0xe00000n : n >> 112n === 0xff02n;
  const broadcast = v4 && n === 0xffffffffn;
  return {
    unspecified,
    loopback,
    linkLocalUnicast,
    linkLocalMulticast,
    globalUnicast: !unspecified && !loopback && !multicast && !linkLocalUnicast && !broadcast,
  };
}

function ipFunctions(): CelFunc[] {
  const S = CelScalar.STRING;
  const B = CelScalar.BOOL;
  const method = (name: string, pick: (c: ReturnType<typeof classify>) => boolean) =>
    celMethod(name, MAP, [], B, function () {
      return pick(classify(addrOf(this)));
    });
  return [
    celFunc('isIP', [S], B, (s) => typeof parseAddr(s) !== 'string'),
    celFunc('ip', [S], MAP, (s) => ipValue(mustAddr(s))),
    celFunc('ip.isCanonical', [S], B, (s) => formatAddr(mustAddr(s)) === s),
    celMethod('family', MAP, [], CelScalar.INT, function () {
      return BigInt(addrOf(this).family);
    }),
    method('isUnspecified', (c) => c.unspecified),
    method('isLoopback', (c) => c.loopback),
    method('isLinkLocalUnicast', (c) => c.linkLocalUnicast),
    method('isLinkLocalMulticast', (c) => c.linkLocalMulticast),
    method('isGlobalUnicast', (c) => c.globalUnicast),
  ];
}

function cidrFunctions(): CelFunc[] {
  const S = CelScalar.STRING;
  const B = CelScalar.BOOL;
  return [
    celFunc('isCIDR', [S], B, (s) => typeof parsePrefix(s) !== 'string'),
    celFunc('cidr', [S], MAP, (s) => cidrValue(mustPrefix(s))),
    celMethod('containsIP', MAP, [S], B, function (s) {
      return prefixContains(prefixOf(this), mustAddr(s));
    }),
    celMethod('containsIP', MAP, [MAP], B, function (ip) {
      return prefixContains(prefixOf(this), addrOf(ip));
    }),
    celMethod('containsCIDR', MAP, [S], B, function (s) {
      const outer = prefixOf(this);
      const inner = mustPrefix(s);
      return inner.bits >= outer.bits && prefixContains(outer, inner.addr);
    }),
    celMethod('containsCIDR', MAP, [MAP], B, function (c) {
      const outer = prefixOf(this);
      const inner = prefixOf(c);
      return inner.bits >= outer.bits && prefixContains(outer, inner.addr);
    }),
    celMethod('ip', MAP, [], MAP, function () {
      return ipValue(prefixOf(this).addr);
    }),
    celMethod('masked', MAP, [], MAP, function () {
      const p = prefixOf(this);
      return cidrValue({ addr: { family: p.addr.family, bits: maskedBits(p) }, bits: p.bits });
    }),
    celMethod('prefixLength', MAP, [], CelScalar.INT, function () {
      return BigInt(prefixOf(this).bits);
    }),
    // string(ip), string(cidr): the standard string() has no overload for maps, so these are reached.
    celFunc('string', [MAP], S, (m) => {
      const ip = m.get(IP_KEY);
      if (typeof ip === 'string') return formatAddr(addrOf(m));
      return `${formatAddr(prefixOf(m).addr)}/${prefixOf(m).bits}`;
    }),
  ];
}

/** Kubernetes' format library, the part upstream's CRD rule uses: `format.dns1123Subdomain()`. */
function formatFunctions(): CelFunc[] {
  const FORMAT = mapType(CelScalar.STRING, CelScalar.STRING);
  // apimachinery's IsDNS1123Subdomain: at most 253 characters and the subdomain pattern
  // (labels are not limited to 63 characters there).
  const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
  const dns1123SubdomainErrors = (s: string): string[] => {
    const errors: string[] = [];
    if (s.length > 253) errors.push('must be no more than 253 characters');
    if (!SUBDOMAIN.test(s))
      errors.push('a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters');
    return errors;
  };
  return [
    celFunc('format.dns1123Subdomain', [], FORMAT, () => ({ 'k8s.format': 'dns1123Subdomain' })),
    celMethod('validate', FORMAT, [CelScalar.STRING], listType(CelScalar.STRING), function (s) {
      if (this.get('k8s.format') !== 'dns1123Subdomain') throw new Error('unknown format');
      return dns1123SubdomainErrors(s);
    }),
    // optional(list).hasValue() as the CRD rule reads it: true when there are errors.
    celMethod('hasValue', listType(CelScalar.STRING), [], CelScalar.BOOL, function () {
      return this.size > 0;
    }),
  ];
}

/** Every extension function of the Kubernetes environment implemented here. */
export const KUBE_FUNCS: readonly CelFunc[] = [
  ...strings,
  ...ipFunctions(),
  ...cidrFunctions(),
  ...formatFunctions(),
];

export type CelOutcome =
  { readonly ok: true; readonly value: CelValue } | { readonly ok: false; readonly error: string };

const ENV = celEnv({ funcs: [...KUBE_FUNCS] });
const PLANS = new Map<string, ReturnType<typeof plan> | Error>();

/** Parses and plans an expression once; a parse error is kept and reported at each evaluation. */
function planned(expression: string): ReturnType<typeof plan> | Error {
  let p = PLANS.get(expression);
  if (p === undefined) {
    try {
      p = plan(ENV, parse(expression));
    } catch (err) {
      p = err instanceof Error ? err : new Error(String(err));
    }
    PLANS.set(expression, p);
  }
  return p;
}

/** Evaluates one expression in the Kubernetes environment; an evaluation error is a value, never thrown. */
export function evalKubeCel(expression: string, bindings: Record<string, unknown>): CelOutcome {
  const p = planned(expression);
  if (p instanceof Error) return { ok: false, error: `parse: ${p.message}` };
  let value: unknown;
  try {
    value = p(bindings as never);
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  if (isCelError(value)) return { ok: false, error: value.message };
  return { ok: true, value: value as CelValue };
}

/** A CEL list or map result as plain JS (lists to arrays, maps to objects), for assertions. */
export function plain(value: unknown): unknown {
  if (isCelMap(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value) out[String(k)] = plain(v);
    return out;
  }
  if (value !== null && typeof value === 'object' && Symbol.iterator in value && typeof value !== 'string')
    return [...(value as Iterable<unknown>)].map(plain);
  return value;
}
