import { isGloballyRoutable, parseIP, type IPFamily } from './ip.js';

/** One service CIDR, parsed once when the ranges change, never per request. */
export interface ServiceRange {
  /** Canonical CIDR text, e.g. `10.96.0.0/12`. */
  readonly cidr: string;
  readonly family: IPFamily;
  readonly prefix: number;
  readonly first: bigint;
  readonly last: bigint;
  /** A terminating ServiceCIDR takes no new allocations but still is service range. */
  readonly terminating: boolean;
  /** The range itself is globally routable (an IPv6 GUA service network, say). */
  readonly global: boolean;
}

export interface ServiceCidrInput {
  readonly cidr: string;
  readonly terminating?: boolean;
}

export type ParseRangesResult =
  { readonly ok: true; readonly ranges: ServiceRanges } | { readonly ok: false; readonly error: string };

/** Parses one CIDR strictly: a valid network address and prefix, host bits zero. */
export function parseCidr(text: string, terminating = false): ServiceRange | string {
  const slash = text.indexOf('/');
  if (slash < 0) return `"${text}" is not a CIDR (expected address/prefix, e.g. 10.96.0.0/12)`;
  const ip = parseIP(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!ip || !/^(0|[1-9]\d{0,2})$/.test(prefixText)) return `"${text}" is not a valid CIDR`;
  // A mapped IPv6 spelling of an IPv4 network would need its prefix rebased; refuse it.
  if (ip.family === 'IPv4' && text.includes(':')) return `"${text}" mixes IPv6 notation with an IPv4 network`;
  const width = ip.family === 'IPv4' ? 32 : 128;
  const prefix = Number(prefixText);
  if (prefix > width) return `"${text}" has a prefix longer than ${width} bits`;
  const hostBits = BigInt(width - prefix);
  const hostMask = (1n << hostBits) - 1n;
  if ((ip.bits & hostMask) !== 0n) {
    const network = ip.bits & ~hostMask;
    return `"${text}" has host bits set; did you mean ${bitsToText(network, ip.family)}/${prefix}?`;
  }
  return {
    cidr: `${ip.canonical}/${prefix}`,
    family: ip.family,
    prefix,
    first: ip.bits,
    last: ip.bits | hostMask,
    terminating,
    global: isGloballyRoutable(ip),
  };
}

function bitsToText(bits: bigint, family: IPFamily): string {
  if (family === 'IPv4') {
    return [24n, 16n, 8n, 0n].map((s) => String((bits >> s) & 255n)).join('.');
  }
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((bits >> s) & 0xffffn).toString(16));
  return parseIP(groups.join(':'))?.canonical ?? groups.join(':');
}

/**
 * The union of the cluster's service CIDRs. Built once per change of the
 * ranges (flag, ServiceCIDR watch) and shared by every request.
 */
export class ServiceRanges {
  private constructor(readonly all: readonly ServiceRange[]) {}

  static readonly empty = new ServiceRanges([]);

  static parse(inputs: readonly (string | ServiceCidrInput)[]): ParseRangesResult {
    const parsed: ServiceRange[] = [];
    for (const input of inputs) {
      const entry = typeof input === 'string' ? { cidr: input } : input;
      const range = parseCidr(entry.cidr.trim(), entry.terminating ?? false);
      if (typeof range === 'string') return { ok: false, error: range };
      // The same CIDR from two ServiceCIDRs is one range; it is terminating only if all are.
      const twin = parsed.findIndex((r) => r.cidr === range.cidr);
      if (twin >= 0) {
        const existing = parsed[twin]!;
        parsed[twin] = { ...existing, terminating: existing.terminating && range.terminating };
      } else parsed.push(range);
    }
    return { ok: true, ranges: new ServiceRanges(parsed) };
  }

  get isEmpty(): boolean {
    return this.all.length === 0;
  }

  /** Every range (terminating ones included) that contains the address. */
  containing(ip: { family: IPFamily; bits: bigint }): ServiceRange[] {
    const out: ServiceRange[] = [];
    for (const r of this.all)
      if (r.family === ip.family && ip.bits >= r.first && ip.bits <= r.last) out.push(r);
    return out;
  }

  hasFamily(family: IPFamily, includeTerminating = true): boolean {
    return this.all.some((r) => r.family === family && (includeTerminating || !r.terminating));
  }

  /** `10.96.0.0/12, fd00:10:96::/112`, shortened past eight ranges. */
  describe(filter: (r: ServiceRange) => boolean = () => true): string {
    const shown = this.all.filter(filter).map((r) => r.cidr);
    if (shown.length === 0) return 'none configured';
    if (shown.length <= 8) return shown.join(', ');
    return `${shown.slice(0, 8).join(', ')} and ${shown.length - 8} more`;
  }

  /** Identity of the set, for logs and change detection. */
  key(): string {
    return this.all.map((r) => `${r.cidr}${r.terminating ? '(terminating)' : ''}`).join(',');
  }
}

/**
 * Why the allocator would never hand out this address from this range: its
 * network address, or the IPv4 broadcast address (ranges larger than /31).
 */
export function reservedKind(ip: { bits: bigint }, range: ServiceRange): 'network' | 'broadcast' | undefined {
  const single = range.family === 'IPv4' ? range.prefix >= 31 : range.prefix >= 127;
  if (single) return undefined;
  if (ip.bits === range.first) return 'network';
  if (range.family === 'IPv4' && ip.bits === range.last) return 'broadcast';
  return undefined;
}
