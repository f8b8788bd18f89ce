/**
 * The engine's static rules as CEL over one address entry `a`: what each
 * rule finds, the field it names and its catalogue message. Only rules that
 * need no lookup and change nothing are here (see OUT_OF_SCOPE). Every
 * expression reads an optional field behind `has()`, so no Gateway the CRD
 * admits makes one of them fail to evaluate.
 */
import {
  DNS1123_SUBDOMAIN_SOURCE,
  ROUTABILITY_MAX_LENGTH,
  ROUTABILITY_PATTERN,
  TESTING_PREFIX,
  type GepRevision,
  type Enforcement,
  type RuleCode,
} from '../rules/index.js';
import { celString, celStringList, messageExpression, renderMessage, staticMessage, token } from './cel.js';

export type ListName = 'spec' | 'status';

/** What the generated CEL depends on besides the request: the rule flags, minus ranges (they are params). */
export interface PolicySettings {
  readonly revision: GepRevision;
  readonly specPolicy: Enforcement;
  readonly statusPolicy: Enforcement;
  readonly clusterDomain: string;
  readonly allowedRoutability: ReadonlySet<string> | undefined;
}

/** One rule on one list. */
export interface RuleCel {
  readonly code: RuleCode;
  readonly list: ListName;
  /** `invalid` findings deny under every policy, as the engine decides them. */
  readonly severity: 'invalid' | 'violation';
  /** CEL over the entry `a` (and, with byIndex, its index `i`): true when the entry has this finding. */
  readonly predicate: string;
  /** Variables the rule reads besides the base ones, placed before its own (they depend on the revision only). */
  readonly variables?: readonly { readonly name: string; readonly expression: string }[];
  /** A rule over the whole status rather than per entry: its own validation (its variables are base ones). */
  readonly whole?: {
    readonly expression: string;
    readonly message: string;
    readonly messageExpression: string;
  };
  /** The predicate reads the entry's index `i` (per-entry variables computed once per list). */
  readonly byIndex?: boolean;
  /** The entry's field the finding names. */
  readonly field: 'routability' | 'value';
  /** messageExpression and the static fallback, given the entry's CEL and the field's CEL. */
  readonly message: (
    entry: string,
    field: string,
    index: string,
  ) => { readonly expression: string; readonly fallback: string };
}

/** Rules of the engine this policy does not carry, and why; printed as a comment with the policy. */
export const OUT_OF_SCOPE: readonly string[] = [
  'ClusterAddressAllocated, ClusterAddressAllocationUnchecked: need a lookup of allocated IPAddress objects',
  'status defaulting (the mutating webhook) and StatusDefaultedExternal: a policy cannot mutate',
  'ClusterAddressGloballyRoutable, RoutabilityTestingValue, UnchangedEntryRatcheted: warnings only, never deny',
  'AddressesMalformed, AddressesTooMany: the Gateway CRD schema refuses these before any policy runs',
  'IPv4-mapped IPv6 values (::ffff:10.96.0.5): Kubernetes CEL ip() refuses them; the policy lets them pass to the webhook',
];

// ---- CEL pieces over an entry ----

export const STR = (x: string) => `(type(${x}) == string)`;
/** `type`, defaulted to IPAddress as the CRD does. */
export const typeOf = (a: string) => `(has(${a}.type) ? ${a}.type : 'IPAddress')`;
const valueString = (a: string) => `(has(${a}.value) && ${STR(`${a}.value`)})`;
/** IPv4-mapped IPv6 spellings, which the engine reads as IPv4 and Kubernetes' ip() refuses. */
const looksMapped = (v: string) => `${v}.lowerAscii().matches('^[0:]*:ffff:')`;
/** An IPAddress or Hostname entry whose value is an IP literal the IP rules judge. */
const ipEntry = (a: string) =>
  `((${typeOf(a)} == 'IPAddress' || ${typeOf(a)} == 'Hostname') && ${valueString(a)} && isIP(${a}.value))`;
/** An IPAddress entry whose value is not an address (and not a mapped spelling left to the webhook). */
const badIPValue = (a: string) =>
  `(${typeOf(a)} == 'IPAddress' && has(${a}.value) && (!${STR(`${a}.value`)} || (!isIP(${a}.value) && !${looksMapped(`${a}.value`)})))`;
const hostnameEntry = (a: string) =>
  `(${typeOf(a)} == 'Hostname' && ${valueString(a)} && !isIP(${a}.value) && !${looksMapped(`${a}.value`)})`;

const hasR = (a: string) => `has(${a}.routability)`;
const isCluster = (a: string) => `(${hasR(a)} && ${a}.routability == 'Cluster')`;

/** External as the list and revision read it: provisional status unset is External; experimental has none. */
function isExternal(a: string, list: ListName, revision: GepRevision): string {
  if (revision === 'experimental') return 'false';
  if (list === 'status') return `(!${hasR(a)} || ${a}.routability == 'External')`;
  return `(${hasR(a)} && ${a}.routability == 'External')`;
}

const PROVISIONAL_RE = celString(ROUTABILITY_PATTERN);
/** The experimental syntax: a DNS-1123 subdomain prefix (no per-label cap, as upstream), a slash, something after it. */
const EXPERIMENTAL_RE = celString(`(?s)^${DNS1123_SUBDOMAIN_SOURCE}/.+$`);
const RESERVED_PREFIX_RE = celString('^([^/]*\\.)?k8s\\.io/');

/** The revision's syntax rule fails (RoutabilityUnsupported). */
export function badSyntax(a: string, revision: GepRevision): string {
  const r = `${a}.routability`;
  const common = `!${STR(r)} || size(${r}) > ${ROUTABILITY_MAX_LENGTH}`;
  if (revision === 'provisional') return `(${hasR(a)} && (${common} || !${r}.matches(${PROVISIONAL_RE})))`;
  return (
    `(${hasR(a)} && (${common} || (${r} != '' && ${r} != 'Cluster' && ` +
    `(${r} == 'External' || !${r}.matches(${EXPERIMENTAL_RE}) || ${r}.matches(${RESERVED_PREFIX_RE})))))`
  );
}

/** Which reason the engine gives for a bad syntax: the same order as checkRoutabilitySyntax. */
function unsupportedReason(r: string, revision: GepRevision): string {
  const tail =
    revision === 'experimental'
      ? `${r} == 'External' ? 'externalRemoved' : ${r}.matches(${EXPERIMENTAL_RE}) ? 'reservedPrefix' : 'syntax'`
      : `'syntax'`;
  return `(!${STR(r)} ? 'notString' : size(${r}) > ${ROUTABILITY_MAX_LENGTH} ? 'tooLong' : ${tail})`;
}

/** A domain-prefixed value the allow-list judges (experimental test values excepted). */
function isPrefixed(a: string, revision: GepRevision): string {
  const r = `${a}.routability`;
  const wellKnown =
    revision === 'experimental'
      ? `${r} != '' && ${r} != 'Cluster'`
      : `${r} != 'Cluster' && ${r} != 'External'`;
  const testing = revision === 'experimental' ? ` && !${r}.startsWith('${TESTING_PREFIX}/')` : '';
  return `(${hasR(a)} && ${STR(r)} && ${wellKnown} && !${badSyntax(a, revision)}${testing})`;
}

/** The message value of an entry's field, as text. */
const textOf = (x: string) => `(${STR(x)} ? ${x} : string(${x}))`;

// ---- range pieces (the params ConfigMap, parsed by the policy's variables) ----

export const RANGES = {
  /** Every service CIDR, terminating ones included. */
  all: 'variables.serviceCIDRs',
  /** The CIDRs that take new allocations. */
  usable: 'variables.usableCIDRs',
  /**
   * The params name at least one range. Empty params (no data, an empty key, nothing that parses)
   * mean the ranges are not known, not that there are none: the range rules then deny nothing
   * (ExternalAddressInsideServiceRange and ClusterAddressReserved cannot fire without a range).
   */
  known: '(size(variables.serviceCIDRs) > 0)',
} as const;

const contains = (c: string, v: string) => `cidr(${c}).containsIP(${v})`;
const POWERS_OF_TWO = `[${Array.from({ length: 33 }, (_, i) => String(2 ** i)).join(', ')}]`;
/** The integer of a canonical IPv4 text. */
const v4Int = (v: string) =>
  `(int(${v}.split('.')[0]) * 16777216 + int(${v}.split('.')[1]) * 65536 + int(${v}.split('.')[2]) * 256 + int(${v}.split('.')[3]))`;
/** The range's network address, or (IPv4) its broadcast address, in a range larger than /31 (/127). */
const reservedIn = (c: string, v: string) =>
  `((ip(${v}).family() == 4 ? cidr(${c}).prefixLength() < 31 : cidr(${c}).prefixLength() < 127) && ` +
  `(cidr(${c}).masked().ip() == ip(${v}) || (ip(${v}).family() == 4 && ` +
  `(${v4Int(`string(ip(${v}))`)} + 1) % ${POWERS_OF_TWO}[32 - cidr(${c}).prefixLength()] == 0)))`;

/** ` (a, b)` description of a range list, or `none configured`, as ServiceRanges.describe. */
const describeRanges = (list: string) => `(size(${list}) == 0 ? 'none configured' : ${list}.join(', '))`;

/** Where a catalogue message's field and value come from. */
interface MessageSource {
  /** The entry's CEL (`variables.spec[...]`). */
  readonly entry: string;
  /** The field's CEL text. */
  readonly field: string;
  readonly sub: 'routability' | 'value';
  /** CEL for the other tokens of the message. */
  readonly extra?: Readonly<Record<string, string>>;
}

/** A message from the catalogue, with field and value filled in from the entry. */
export function catalogueMessage(render: (field: string, value: string) => string, source: MessageSource) {
  const { entry, field, sub, extra = {} } = source;
  const rendered = render(token('field'), token('value'));
  return {
    expression: messageExpression(rendered, { field, value: textOf(`${entry}.${sub}`), ...extra }),
    fallback: staticMessage(rendered, { field: `addresses[*].${sub}`, value: '*' }),
  };
}

/** Picks one of several messages by a CEL string expression (the last is the default). */
export function choose(
  selector: string,
  variants: readonly (readonly [string, { expression: string; fallback: string }])[],
) {
  let expression = variants.at(-1)![1].expression;
  for (const [key, variant] of variants.slice(0, -1).reverse())
    expression = `(${selector} == ${celString(key)} ? ${variant.expression} : ${expression})`;
  return { expression, fallback: variants.at(-1)![1].fallback };
}

// ---- the rules ----

function unsupported(list: ListName, revision: GepRevision): RuleCel {
  return {
    code: 'RoutabilityUnsupported',
    list,
    severity: 'invalid',
    predicate: badSyntax('a', revision),
    field: 'routability',
    message: (entry, field) => {
      const reasons = ['notString', 'tooLong', 'externalRemoved', 'reservedPrefix', 'syntax'] as const;
      const variants = reasons.map(
        (reason) =>
          [
            reason,
            catalogueMessage(
              (f, v) => renderMessage('RoutabilityUnsupported', f, { value: v, reason, revision }),
              { entry, field, sub: 'routability' },
            ),
          ] as const,
      );
      return choose(unsupportedReason(`${entry}.routability`, revision), variants);
    },
  };
}

function notAllowed(settings: PolicySettings, allowed: ReadonlySet<string>): RuleCel {
  const sorted = [...allowed].sort();
  return {
    code: 'RoutabilityNotAllowed',
    list: 'spec',
    severity: 'violation',
    predicate: `(${isPrefixed('a', settings.revision)} && !(a.routability in ${celStringList(sorted)}))`,
    field: 'routability',
    message: (entry, field) =>
      catalogueMessage(
        (f, v) =>
          renderMessage('RoutabilityNotAllowed', f, {
            value: v,
            allowed: sorted,
            revision: settings.revision,
          }),
        { entry, field, sub: 'routability' },
      ),
  };
}

function valueInvalid(list: ListName, revision: GepRevision): RuleCel {
  const external = isExternal('a', list, revision);
  return {
    code: 'AddressValueInvalid',
    list,
    severity: 'violation',
    predicate: `((${isCluster('a')} || ${external}) && ${badIPValue('a')})`,
    field: 'value',
    message: (entry, field) => {
      const variant = (routability: string, unset: boolean) =>
        catalogueMessage(
          (f, v) => renderMessage('AddressValueInvalid', f, { value: v, routability, unset, cidr: false }),
          { entry, field, sub: 'value' },
        );
      const selector = `(${isCluster(entry)} ? 'Cluster' : ${hasR(entry)} ? 'External' : 'unset')`;
      return choose(selector, [
        ['Cluster', variant('Cluster', false)],
        ['External', variant('External', false)],
        ['unset', variant('External', true)],
      ]);
    },
  };
}

function clusterOutside(list: ListName): RuleCel {
  const ranges = list === 'spec' ? RANGES.usable : RANGES.all;
  return {
    code: 'ClusterAddressOutsideServiceRange',
    list,
    severity: 'violation',
    // Params without a range (empty, not yet written by serve) say nothing is known: no denial.
    predicate: `(${RANGES.known} && ${isCluster('a')} && ${ipEntry('a')} && !${ranges}.exists(c, ${contains('c', 'a.value')}))`,
    field: 'value',
    message: (entry, field) =>
      catalogueMessage(
        (f, v) =>
          renderMessage('ClusterAddressOutsideServiceRange', f, { value: v, ranges: token('ranges') }),
        { entry, field, sub: 'value', extra: { ranges: describeRanges(ranges) } },
      ),
  };
}

function clusterReserved(): RuleCel {
  const usable = RANGES.usable;
  return {
    code: 'ClusterAddressReserved',
    list: 'spec',
    severity: 'violation',
    predicate:
      `(${isCluster('a')} && ${ipEntry('a')} && ${usable}.exists(c, ${contains('c', 'a.value')}) && ` +
      `${usable}.all(c, !${contains('c', 'a.value')} || ${reservedIn('c', 'a.value')}))`,
    field: 'value',
    message: (entry, field) => {
      const v = `${entry}.value`;
      const first = `${usable}.filter(c, ${contains('c', v)})[0]`;
      const kind = `(cidr(${first}).masked().ip() == ip(${v}) ? 'network' : 'broadcast')`;
      return catalogueMessage(
        (f, value) =>
          renderMessage('ClusterAddressReserved', f, {
            value,
            kind: token('kind') as 'network',
            cidr: token('cidr'),
          }),
        { entry, field, sub: 'value', extra: { kind, cidr: first } },
      );
    },
  };
}

function externalInside(list: ListName): RuleCel {
  const all = RANGES.all;
  return {
    code: 'ExternalAddressInsideServiceRange',
    list,
    severity: 'violation',
    predicate: `(${isExternal('a', list, 'provisional')} && ${ipEntry('a')} && ${all}.exists(c, ${contains('c', 'a.value')}))`,
    field: 'value',
    message: (entry, field) => {
      const first = `${all}.filter(c, ${contains('c', `${entry}.value`)})[0]`;
      const variant = (unset: boolean) =>
        catalogueMessage(
          (f, v) =>
            renderMessage('ExternalAddressInsideServiceRange', f, { value: v, cidr: token('cidr'), unset }),
          { entry, field, sub: 'value', extra: { cidr: first } },
        );
      return choose(`(${hasR(entry)} ? 'set' : 'unset')`, [
        ['unset', variant(true)],
        ['set', variant(false)],
      ]);
    },
  };
}

function externalHostname(list: ListName, clusterDomain: string): RuleCel {
  const zone = clusterDomain.toLowerCase().replace(/\.$/, '');
  const name = `a.value.lowerAscii()`;
  const inZone = [zone, `${zone}.`].map(
    (z) => `${name} == ${celString(z)} || ${name}.endsWith(${celString(`.${z}`)})`,
  );
  return {
    code: 'ExternalHostnameInClusterDomain',
    list,
    severity: 'violation',
    predicate: `(${isExternal('a', list, 'provisional')} && ${hostnameEntry('a')} && (${inZone.join(' || ')}))`,
    field: 'value',
    message: (entry, field) => {
      const variant = (unset: boolean) =>
        catalogueMessage(
          (f, v) => renderMessage('ExternalHostnameInClusterDomain', f, { value: v, domain: zone, unset }),
          { entry, field, sub: 'value' },
        );
      return choose(`(${hasR(entry)} ? 'set' : 'unset')`, [
        ['unset', variant(true)],
        ['set', variant(false)],
      ]);
    },
  };
}

/** The rules that read one entry alone, spec rules first (policy-rules.ts adds the status-against-spec one). */
export function entryRules(settings: PolicySettings): RuleCel[] {
  const { revision } = settings;
  const out: RuleCel[] = [unsupported('spec', revision)];
  if (settings.allowedRoutability && settings.allowedRoutability.size > 0)
    out.push(notAllowed(settings, settings.allowedRoutability));
  out.push(valueInvalid('spec', revision), clusterOutside('spec'), clusterReserved());
  if (revision === 'provisional')
    out.push(externalInside('spec'), externalHostname('spec', settings.clusterDomain));
  out.push(unsupported('status', revision), valueInvalid('status', revision), clusterOutside('status'));
  if (revision === 'provisional')
    out.push(externalInside('status'), externalHostname('status', settings.clusterDomain));
  return out;
}

/**
 * The key the engine ratchets by (type, canonical value, effective
 * routability) as one string, length-prefixed so no two entries share one.
 * The stored list's keys are computed once (a variable), so the check per
 * entry is one `in` over at most 16 strings.
 */
export function entryKey(x: string, list: ListName, revision: GepRevision): string {
  const t = typeOf(x);
  const value = `${x}.value`;
  const canonical = `(${t} == 'IPAddress' && ${STR(value)} && isIP(${value}) ? string(ip(${value})) : ${textOf(value)})`;
  const v = `(has(${value}) ? 'v' + ${canonical} : '-')`;
  const r = `${x}.routability`;
  const unsetAs = revision === 'experimental' ? "'r'" : list === 'status' ? "'rExternal'" : "'-'";
  const routability = `(${hasR(x)} ? 'r' + ${textOf(r)} : ${unsetAs})`;
  const part = (p: string) => `string(size(${p})) + ':' + ${p}`;
  return `(${part(textOf(t))} + ${part(v)} + ${routability})`;
}
