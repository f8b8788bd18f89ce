/** Metrics of the GEP-5093 revision in force, registered once per registry. */
import type { Registry } from 'prom-client';
import { GEP_REVISIONS, type GepRevision } from '../../rules/index.js';
import { gauge } from '../../metric-registry.js';

export interface RevisionMetrics {
  /** 1 for the revision the rules use, 0 for the other (both 0 while it is unknown). */
  setRevision(revision: GepRevision | undefined): void;
  /** 1 while the cluster's Gateway CRD is installed without a routability field. */
  setFieldMissing(missing: boolean): void;
}

export function revisionMetrics(registry: Registry): RevisionMetrics {
  const revision = gauge(registry, {
    name: 'routability_webhook_gep_revision',
    help: 'GEP-5093 revision the rules follow: 1 for the one in force (provisional or experimental), 0 otherwise.',
    labelNames: ['revision'] as const,
  });
  const missing = gauge(registry, {
    name: 'routability_webhook_gateway_crd_routability_missing',
    help: 'Is 1 while the Gateway CRD has no routability field (the API server drops it): add it with crd-patch.',
  });
  const metrics: RevisionMetrics = {
    setRevision: (inForce) => {
      for (const r of GEP_REVISIONS) revision.set({ revision: r }, r === inForce ? 1 : 0);
    },
    setFieldMissing: (on) => missing.set(on ? 1 : 0),
  };
  // Present from the start, so dashboards and alerts see 0 rather than nothing.
  metrics.setRevision(undefined);
  metrics.setFieldMissing(false);
  return metrics;
}
