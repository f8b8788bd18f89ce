/** The status defaulting patch: GEP-5093 reads an unset status routability as External; make it explicit. */
import { parseIP } from './ip.js';
import { isStatusWrite, type GatewayReview } from './review.js';
import { isClusterDomainHostname } from './routability.js';
import { finding, type Finding, type RuleContext } from './types.js';

export interface JsonPatchOperation {
  readonly op: 'add';
  readonly path: string;
  readonly value: string;
}

export interface MutationResult {
  readonly patch: readonly JsonPatchOperation[];
  /** StatusDefaultedExternal notices for addresses that look cluster-internal. */
  readonly notices: readonly Finding[];
}

const NOTHING: MutationResult = { patch: [], notices: [] };

/**
 * On UPDATE of gateways/status, adds `routability: External` to every status
 * address that has none. Only indices that exist, and a second pass over the
 * patched object yields nothing, since the apiserver may call us twice.
 */
export function mutateGatewayReview(review: GatewayReview, ctx: RuleContext): MutationResult {
  if (!isStatusWrite(review)) return NOTHING;
  const patch: JsonPatchOperation[] = [];
  const notices: Finding[] = [];
  for (const entry of review.gateway.status.entries) {
    if (entry.routability !== undefined) continue;
    patch.push({ op: 'add', path: entry.field.child('routability').toPointer(), value: 'External' });
    if (typeof entry.value !== 'string') continue;
    if (entry.type === 'IPAddress') {
      const ip = parseIP(entry.value);
      if (ip && ctx.ranges.containing(ip).length > 0)
        notices.push(finding('StatusDefaultedExternal', entry.field, { value: entry.value, why: 'range' }));
    } else if (entry.type === 'Hostname' && isClusterDomainHostname(entry.value, ctx.clusterDomain)) {
      notices.push(finding('StatusDefaultedExternal', entry.field, { value: entry.value, why: 'hostname' }));
    }
  }
  return { patch, notices };
}
