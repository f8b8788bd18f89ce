/**
 * Readiness, component by component. Each part of the server (the serving
 * certificate, the service ranges, the allocated IPs, shutdown, and any
 * source added later) describes itself as a HealthComponent: whether it lets
 * the server take reviews, and what /readyz?verbose shows about it. The
 * health endpoint only aggregates them.
 */
export interface ReadinessResult {
  readonly ok: boolean;
  readonly reason?: string | undefined;
}

export interface HealthComponent {
  /** The name /readyz lists the component under when it is not ready. */
  readonly name: string;
  /** Absent for a component that never holds readiness back (it only reports). */
  readonly check?: () => ReadinessResult;
  /** For /readyz?verbose: shown under `detail[key]`. */
  readonly detail?: { readonly key: string; readonly describe: () => unknown };
}

/** A source that knows whether it is ready and can describe itself (service ranges, the CRD revision). */
export interface DescribedSource {
  readiness(): { readonly ready: boolean; readonly reason?: string | undefined };
  describe(): unknown;
}

export function sourceComponent(name: string, detailKey: string, source: DescribedSource): HealthComponent {
  return {
    name,
    check: () => {
      const r = source.readiness();
      return { ok: r.ready, reason: r.reason };
    },
    detail: { key: detailKey, describe: () => source.describe() },
  };
}

/** Evaluates every check; not ready names each failing one and why. */
export function evaluateReadiness(components: readonly HealthComponent[]): {
  ready: boolean;
  failing: string[];
} {
  const failing: string[] = [];
  for (const c of components) {
    const r = c.check?.();
    if (r && !r.ok) failing.push(`${c.name}: ${r.reason ?? 'not ready'}`);
  }
  return { ready: failing.length === 0, failing };
}

/** The verbose detail: each component's description under its key. */
export function readinessDetail(components: readonly HealthComponent[]): Record<string, unknown> {
  const detail: Record<string, unknown> = {};
  for (const c of components) if (c.detail) detail[c.detail.key] = c.detail.describe();
  return detail;
}
