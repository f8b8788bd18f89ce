/**
 * The two `routability` schemas this project writes into the Gateway CRD, one
 * per GEP-5093 revision. Pure data: no I/O.
 *
 * - provisional: this project's own schema (the seed revision): a pattern that
 *   admits External, Cluster and domain-prefixed values, and rejects `""`.
 * - experimental: upstream's schema, exactly as upstream's experimental channel
 *   has it: maxLength 253 and one CEL rule (with its message) that admits `""`,
 *   Cluster and `<DNS-1123 subdomain>/<path>` outside `k8s.io`.
 */
import type { GepRevision } from '../rules/index.js';
import { ROUTABILITY_MAX_LENGTH, ROUTABILITY_PATTERN } from '../rules/index.js';

/** Upstream's CEL rule on spec and status `routability`, verbatim. */
export const UPSTREAM_ROUTABILITY_RULE =
  "size(self) == 0 || self == 'Cluster' || (self.matches('^.*/.+$') && " +
  "!format.dns1123Subdomain().validate(self.split('/')[0]).hasValue() && " +
  "self.split('/')[0] != 'k8s.io' && !self.split('/')[0].endsWith('.k8s.io'))";

/** The message upstream's CRD gives when that rule fails, verbatim. */
export const UPSTREAM_ROUTABILITY_MESSAGE =
  'Routability must be empty, Cluster, or an implementation-specific prefixed path; k8s.io and its subdomains are reserved';

/** Upstream's maxLength (the same number the provisional schema uses). */
export const UPSTREAM_ROUTABILITY_MAX_LENGTH = 253;

export interface ProvisionalRoutabilitySchema {
  readonly description: string;
  readonly type: 'string';
  readonly maxLength: number;
  readonly pattern: string;
}

export interface ExperimentalRoutabilitySchema {
  readonly description: string;
  readonly type: 'string';
  readonly maxLength: number;
  readonly 'x-kubernetes-validations': readonly { readonly rule: string; readonly message: string }[];
}

export function provisionalRoutabilitySchema(): ProvisionalRoutabilitySchema {
  return {
    description:
      'Routability is the reachability scope of the address (GEP-5093). "External": reachable from ' +
      'anywhere, never from the cluster service IP range; unset in status means External. "Cluster": ' +
      'reachable from inside the cluster at least; an address from the service IP range. A ' +
      'domain-prefixed value (e.g. example.com/CorpWan) is implementation-specific.',
    type: 'string',
    maxLength: ROUTABILITY_MAX_LENGTH,
    pattern: ROUTABILITY_PATTERN,
  };
}

export function experimentalRoutabilitySchema(): ExperimentalRoutabilitySchema {
  return {
    description:
      'Routability is the reachability scope of the address (GEP-5093, experimental revision). ' +
      'Empty: the implementation default. "Cluster": a ClusterIP, reachable inside the cluster. ' +
      'A value <DNS subdomain>/<path> is implementation-specific; k8s.io and its subdomains are reserved.',
    type: 'string',
    maxLength: UPSTREAM_ROUTABILITY_MAX_LENGTH,
    'x-kubernetes-validations': [{ rule: UPSTREAM_ROUTABILITY_RULE, message: UPSTREAM_ROUTABILITY_MESSAGE }],
  };
}

export function routabilitySchemaFor(
  revision: GepRevision,
): ProvisionalRoutabilitySchema | ExperimentalRoutabilitySchema {
  return revision === 'provisional' ? provisionalRoutabilitySchema() : experimentalRoutabilitySchema();
}
