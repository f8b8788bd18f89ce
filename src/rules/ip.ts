import ipaddr from 'ipaddr.js';

export type IPFamily = 'IPv4' | 'IPv6';

/** An IP address parsed once: its family, its 32/128-bit value and its canonical text. */
export interface ParsedIP {
  readonly family: IPFamily;
  readonly bits: bigint;
  /** Canonical form, as Kubernetes names IPAddress objects (RFC 5952 for IPv6). */
  readonly canonical: string;
  readonly address: ipaddr.IPv4 | ipaddr.IPv6;
}

// Go's net.ParseIP, which the apiserver's `format: ipv4|ipv6` uses, rejects leading
// zeros (ambiguous octal) and zones; ipaddr.js and net.isIP accept some of them.
const IPV4_STRICT = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const IPV6_CHARS = /^[0-9A-Fa-f:.]+$/;

function bytesToBigInt(bytes: number[]): bigint {
  let out = 0n;
  for (const b of bytes) out = (out << 8n) | BigInt(b);
  return out;
}

/**
 * Parses an IP address as strictly as the apiserver does, or returns undefined.
 * IPv4-mapped IPv6 addresses (`::ffff:10.96.0.5`) are read as the IPv4 address
 * they carry, as Go's IPNet.Contains does.
 */
export function parseIP(text: string): ParsedIP | undefined {
  if (text.length > 45) return undefined;
  if (IPV4_STRICT.test(text)) {
    const address = ipaddr.IPv4.parse(text);
    return {
      family: 'IPv4',
      bits: bytesToBigInt(address.toByteArray()),
      canonical: address.toString(),
      address,
    };
  }
  if (!IPV6_CHARS.test(text) || !text.includes(':')) return undefined;
  const dotted = text.lastIndexOf(':');
  const tail = text.slice(dotted + 1);
  if (tail.includes('.') && !IPV4_STRICT.test(tail)) return undefined;
  if (!ipaddr.IPv6.isValid(text)) return undefined;
  const v6 = ipaddr.IPv6.parse(text);
  if (v6.isIPv4MappedAddress()) {
    const address = v6.toIPv4Address();
    return {
      family: 'IPv4',
      bits: bytesToBigInt(address.toByteArray()),
      canonical: address.toString(),
      address,
    };
  }
  return {
    family: 'IPv6',
    bits: bytesToBigInt(v6.toByteArray()),
    canonical: v6.toRFC5952String(),
    address: v6,
  };
}

/** True when the address is globally routable (not private, ULA, loopback, documentation, …). */
export function isGloballyRoutable(ip: ParsedIP): boolean {
  return ip.address.range() === 'unicast';
}
