/**
 * Which text of GEP-5093 the rules follow. `provisional` is the revision this
 * project was first built from (External, Cluster, domain-prefixed values; an
 * unset status routability reads as External). `experimental` is upstream's
 * later revision (`""` is the default, External is gone, k8s.io prefixes are
 * reserved). The engine takes it as a parameter of the rule context; choosing
 * it (flag, or the cluster's Gateway CRD) happens outside the engine.
 */
export type GepRevision = 'provisional' | 'experimental';

export const GEP_REVISIONS: readonly GepRevision[] = ['provisional', 'experimental'];

/** What a user may ask for: a fixed revision, or follow the cluster's Gateway CRD. */
export type GepRevisionSetting = GepRevision | 'auto';
