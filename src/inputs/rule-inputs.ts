/**
 * What the rules need from the cluster (or from flags), as one object: the
 * service ranges, the allocated-IP lookups and the GEP-5093 revision in
 * force. Built once by server/ and handed to the admission routes and the
 * audit, which read the same rule context: `current()` is one RuleContext per
 * ranges snapshot and revision, not per request (a CRD change that switches
 * the revision takes effect on the next review); `onChange` tells the audit
 * when the ranges or the revision change, instead of it polling for it.
 */
import { allocationPrefetch, type AllocationPrefetch } from './allocations/allocation-prefetch.js';
import type { RevisionSource } from './revision/crd-revision-source.js';
import { allocatedIPsComponent, serviceRangesComponent } from './health.js';
import type { ClusterSources } from './ranges/types.js';
import { offlineRevision, ruleContext, type RuleSettings } from '../config/rule-settings.js';
import { sourceComponent, type HealthComponent } from '../readiness.js';
import type { GepRevision, RuleContext, ServiceRanges } from '../rules/index.js';

/** The rule context in force now and the revision it follows. */
export interface CurrentInputs {
  readonly ctx: RuleContext;
  readonly revision: GepRevision;
}

/** What each input tells /readyz, for the server to list in its own order. */
export interface InputComponents {
  readonly serviceRanges: HealthComponent;
  readonly allocatedIPs: HealthComponent;
  /** Absent when the revision is read offline (no source given). */
  readonly gepRevision: HealthComponent | undefined;
}

export interface RuleInputs {
  /** The context in force; undefined while the ranges or the revision are unknown. */
  current(): CurrentInputs | undefined;
  /** Why current() is undefined: the ranges first (they were first), then the revision. */
  notReadyReason(): string;
  /** Allocated IPs looked up only for the reviews whose rules ask; undefined when the check is off. */
  readonly prefetch: AllocationPrefetch | undefined;
  readonly components: InputComponents;
  /** Called when the ranges or the revision change; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  close(): Promise<void>;
}

export interface RuleInputsParts {
  readonly settings: RuleSettings;
  readonly sources: ClusterSources;
  /** The GEP-5093 revision in force; absent: --gep-revision read offline (auto = provisional). */
  readonly revision?: RevisionSource | undefined;
}

export function ruleInputs(parts: RuleInputsParts): RuleInputs {
  const { settings, sources, revision } = parts;
  const fixed = offlineRevision(settings.gepRevision);
  const prefetch = sources.allocatedIPs ? allocationPrefetch(sources.allocatedIPs) : undefined;
  let cached: { ranges: ServiceRanges; revision: GepRevision; ctx: RuleContext } | undefined;
  return {
    current: () => {
      const ranges = sources.ranges.current();
      const now = revision ? revision.current() : fixed;
      if (!ranges || !now) return undefined;
      if (cached?.ranges !== ranges || cached.revision !== now)
        cached = { ranges, revision: now, ctx: ruleContext(settings, ranges, prefetch?.recorder, now) };
      return cached;
    },
    notReadyReason: () => {
      if (!sources.ranges.current()) return sources.ranges.readiness().reason ?? 'service ranges unknown';
      return revision?.readiness().reason ?? 'GEP-5093 revision unknown';
    },
    prefetch,
    components: {
      serviceRanges: serviceRangesComponent(sources.ranges),
      allocatedIPs: allocatedIPsComponent(sources.allocatedIPs),
      gepRevision: revision ? sourceComponent('gep-revision', 'gepRevision', revision) : undefined,
    },
    onChange: (listener) => {
      const off = [sources.ranges.onChange?.(listener), revision?.onChange?.(listener)];
      return () => off.forEach((f) => f?.());
    },
    close: async () => {
      await Promise.all([sources.close(), revision?.close()]);
    },
  };
}
