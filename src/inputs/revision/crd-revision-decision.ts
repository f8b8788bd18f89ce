/**
 * From what the cluster says about its Gateway CRD to the revision the rules
 * use: one decision shared by the live watch (serve) and the one-shot read
 * (`check --from-cluster`). No I/O.
 */
import { describeCrdRevision, revisionOfGatewayCrd } from '../../crd/gep-revision.js';
import { GATEWAY_CRD_NAME } from '../../crd/patch.js';
import type { GepRevision } from '../../rules/index.js';

export const GEP_REVISION_FLAG_HINT =
  'set --gep-revision provisional or experimental (ROUTABILITY_WEBHOOK_GEP_REVISION)';

export const ADD_ROUTABILITY_HINT =
  'add it with `routability-webhook crd-patch --patch-cluster --gep-revision provisional|experimental` ' +
  '(the chart: crdPatch.enabled=true), or install a Gateway API release whose CRD carries it';

export type CrdState =
  /** The CRD declares routability in a schema of one revision. */
  | 'provisional'
  | 'experimental'
  /** The CRD is installed without routability: the apiserver prunes the field. */
  | 'field-missing'
  /** No Gateway CRD: Gateway API is not installed. */
  | 'not-installed'
  /** A routability schema neither revision matches, or versions that disagree. */
  | 'undecidable';

export interface RevisionDecision {
  readonly state: CrdState;
  /** The revision the rules use; undefined when it cannot be told (the server is then not ready). */
  readonly revision: GepRevision | undefined;
  /** One line: what the CRD carries and what follows. */
  readonly summary: string;
  /** The generation of the CRD read, when known. */
  readonly generation?: number;
}

/**
 * `crd` is the Gateway CRD as the API server sent it, or undefined when the
 * API server said there is none. Where nothing can carry the field (no CRD,
 * or a CRD without it) the rules still need a revision: the provisional one,
 * which is what the server did before it could follow CRDs, and what it does
 * without a cluster.
 */
export function decideRevision(crd: unknown): RevisionDecision {
  if (crd === undefined)
    return {
      state: 'not-installed',
      revision: 'provisional',
      summary: `Gateway API is not installed (no CRD ${GATEWAY_CRD_NAME}): no Gateway can carry routability; provisional until the CRD appears`,
    };
  const rawGeneration = (crd as { metadata?: { generation?: unknown } }).metadata?.generation;
  const generation = typeof rawGeneration === 'number' ? { generation: rawGeneration } : {};
  const found = revisionOfGatewayCrd(crd);
  switch (found.kind) {
    case 'revision':
      return {
        state: found.revision,
        revision: found.revision,
        summary: `crd/${GATEWAY_CRD_NAME} carries the ${describeCrdRevision(found)}`,
        ...generation,
      };
    case 'field-missing':
      return {
        state: 'field-missing',
        revision: 'provisional',
        summary:
          `crd/${GATEWAY_CRD_NAME} has no routability field (${found.versions.join(', ')}): the API server drops it ` +
          `from every Gateway, so there is nothing to check; ${ADD_ROUTABILITY_HINT}`,
        ...generation,
      };
    case 'undecidable':
      return {
        state: 'undecidable',
        revision: undefined,
        summary: `cannot tell which GEP-5093 revision crd/${GATEWAY_CRD_NAME} carries: ${found.detail}; ${GEP_REVISION_FLAG_HINT}`,
        ...generation,
      };
  }
}
