/**
 * The status defaulting patch. Provisional GEP-5093 reads an unset status
 * routability as External; the experimental revision reads it as `""` and
 * wants claiming implementations to write it. Either way, make it explicit.
 */
import type { AddressEntry } from './gateway.js';
import { parseIP } from './ip.js';
import { isStatusWrite, type GatewayReview } from './review.js';
import { isClusterDomainHostname } from './routability.js';
import { finding, type Finding, type RuleContext } from './types.js';
import { budgetWarnings } from './warnings.js';

export interface JsonPatchOperation {
  readonly op: 'add';
  readonly path: string;
  readonly value: string;
}

export interface MutationResult {
  readonly patch: readonly JsonPatchOperation[];
  /** StatusDefaultedExternal notices for addresses that look cluster-internal; shape findings of the list. */
  readonly notices: readonly Finding[];
  /** The notices as admission warnings, within the same budget as every answer. */
  readonly warnings: readonly string[];
}

const NOTHING: MutationResult = { patch: [], notices: [], warnings: [] };

/**
 * On UPDATE of gateways/status, adds the revision's default to every status
 * address without routability: `External` (provisional), `""` (experimental).
 * Under the provisional revision an explicit `""` (what a controller built for
 * upstream's revision writes) is the same request for the default, and the
 * provisional CRD pattern refuses it: it is replaced by `External` too (an
 * `add` on an existing member replaces it, RFC 6902 §4.1). Only indices that
 * exist, and a second pass over the patched object yields nothing, since the
 * apiserver may call us twice. A list longer than the CRD allows is left
 * alone: the apiserver refuses it after mutation anyway.
 */
export function mutateGatewayReview(review: GatewayReview, ctx: RuleContext): MutationResult {
  if (!isStatusWrite(review)) return NOTHING;
  const experimental = ctx.revision === 'experimental';
  const patch: JsonPatchOperation[] = [];
  const notices: Finding[] = review.gateway.status.findings.filter((f) => f.code === 'AddressesTooMany');
  for (const entry of review.gateway.status.entries) {
    const unset = entry.routability === undefined || (!experimental && entry.routability === '');
    if (!unset) continue;
    const path = entry.field.child('routability').toPointer();
    if (experimental) {
      patch.push({ op: 'add', path, value: '' });
      continue;
    }
    patch.push({ op: 'add', path, value: 'External' });
    const notice = defaultedExternalNotice(entry, ctx);
    if (notice) notices.push(notice);
  }
  if (patch.length === 0 && notices.length === 0) return NOTHING;
  return { patch, notices, warnings: budgetWarnings(notices.map((f) => f.warning)) };
}

/**
 * The provisional default says External: a notice when the address looks
 * like it is reached from inside the cluster (in a service range, or a
 * hostname in the cluster domain), so the controller knows what it claimed.
 */
function defaultedExternalNotice(entry: AddressEntry, ctx: RuleContext): Finding | undefined {
  if (typeof entry.value !== 'string') return undefined;
  // A Hostname that is an IP literal is judged by the IP rules.
  const ip = entry.type === 'IPAddress' || entry.type === 'Hostname' ? parseIP(entry.value) : undefined;
  if (ip)
    return ctx.ranges.containing(ip).length > 0
      ? finding('StatusDefaultedExternal', entry.field, { value: entry.value, why: 'range' })
      : undefined;
  if (entry.type === 'Hostname' && isClusterDomainHostname(entry.value, ctx.clusterDomain))
    return finding('StatusDefaultedExternal', entry.field, { value: entry.value, why: 'hostname' });
  return undefined;
}
