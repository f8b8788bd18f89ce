/**
 * `--audit-reports`: the audit's findings as report objects that Policy
 * Reporter and dashboards read — one report per namespace, one result per
 * finding (a Gateway address entry that fails a rule), the Gateway as the
 * result's resource. Two published APIs share the result layout:
 * PolicyReport `wgpolicyk8s.io/v1alpha2` and OpenReports `openreports.io/v1alpha1`.
 * Only building happens here; writing is the report writer's job.
 */
import type { AuditReportsMode } from '../config/serve.js';
import { GATEWAY_API_GROUP } from '../rules/index.js';
import type { AuditFinding, AuditResult, AuditedGateway } from './pass.js';

export interface ReportApi {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}

export const REPORT_APIS: Readonly<Record<Exclude<AuditReportsMode, 'none'>, ReportApi>> = {
  policyreport: {
    group: 'wgpolicyk8s.io',
    version: 'v1alpha2',
    plural: 'policyreports',
    kind: 'PolicyReport',
  },
  openreports: { group: 'openreports.io', version: 'v1alpha1', plural: 'reports', kind: 'Report' },
};

/** Every report this product writes has this name in its namespace, and this label. */
export const REPORT_NAME = 'gateway-routability-audit';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'gateway-routability-webhook';
/** `results[].source` (and OpenReports' report-level `source`): how Policy Reporter groups results. */
export const REPORT_SOURCE = 'gateway-routability-webhook';
export const REPORT_CATEGORY = 'Gateway address routability';
/** Set when a namespace has more findings than a report carries. */
export const OMITTED_ANNOTATION = 'gateway-routability-webhook/results-omitted';
/**
 * Results per report: ~600 bytes each keeps a report near 600 kB, well inside
 * etcd's 1.5 MiB object limit. The summary still counts every finding.
 */
export const MAX_RESULTS = 1000;

export interface ReportResult {
  readonly source: string;
  readonly policy: string;
  readonly rule: string;
  readonly category: string;
  readonly result: 'fail' | 'warn';
  readonly severity: 'high' | 'medium';
  readonly scored: boolean;
  readonly message: string;
  readonly timestamp: { readonly seconds: number; readonly nanos: number };
  readonly resources: readonly Record<string, string>[];
  readonly properties: Readonly<Record<string, string>>;
}

export interface ReportObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string | undefined;
  };
  source?: string;
  summary: { pass: number; fail: number; warn: number; error: number; skip: number };
  results: ReportResult[];
}

/** Identifies one finding across passes, so its first-seen timestamp is kept. */
export function resultKey(r: Pick<ReportResult, 'rule' | 'resources' | 'properties'>): string {
  const gw = r.resources[0];
  return [
    `${gw?.['namespace'] ?? ''}/${gw?.['name'] ?? ''}`,
    r.rule,
    r.properties['scope'] ?? '',
    r.properties['field'] ?? '',
  ].join(' ');
}

function resultOf(g: AuditedGateway, f: AuditFinding, seconds: number): ReportResult {
  const violation = f.severity === 'violation';
  return {
    source: REPORT_SOURCE,
    policy: f.code,
    rule: f.code,
    category: REPORT_CATEGORY,
    result: violation ? 'fail' : 'warn',
    severity: violation ? 'high' : 'medium',
    scored: violation,
    message: f.message,
    timestamp: { seconds, nanos: 0 },
    resources: [
      {
        apiVersion: `${GATEWAY_API_GROUP}/v1`,
        kind: 'Gateway',
        namespace: g.namespace,
        name: g.name,
        ...(g.uid ? { uid: g.uid } : {}),
      },
    ],
    properties: { field: f.field, scope: f.check },
  };
}

/** Findings of the pass grouped by namespace, Gateways in list order. */
function byNamespace(result: AuditResult): Map<string, AuditedGateway[]> {
  const out = new Map<string, AuditedGateway[]>();
  for (const g of result.flagged) {
    if (g.namespace === '') continue; // Gateways are namespaced: an object without one has no report
    const list = out.get(g.namespace) ?? [];
    list.push(g);
    out.set(g.namespace, list);
  }
  return out;
}

export interface BuildOptions {
  /** Unix seconds: the timestamp of findings not seen before. */
  readonly nowSeconds: number;
  /** First-seen timestamps of findings already reported, by resultKey. */
  readonly seen?: ReadonlyMap<string, number>;
  readonly maxResults?: number;
}

function reportOf(api: ReportApi, namespace: string, results: ReportResult[], max: number): ReportObject {
  const fail = results.filter((r) => r.result === 'fail').length;
  const kept = results.slice(0, max);
  const omitted = results.length - kept.length;
  return {
    apiVersion: `${api.group}/${api.version}`,
    kind: api.kind,
    metadata: {
      name: REPORT_NAME,
      namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
      ...(omitted > 0 ? { annotations: { [OMITTED_ANNOTATION]: String(omitted) } } : {}),
    },
    ...(api.group === REPORT_APIS.openreports.group ? { source: REPORT_SOURCE } : {}),
    summary: { pass: 0, fail, warn: results.length - fail, error: 0, skip: 0 },
    results: kept,
  };
}

/** The reports the cluster should hold after this pass: one per namespace with findings. */
export function desiredReports(
  result: AuditResult,
  api: ReportApi,
  options: BuildOptions,
): Map<string, ReportObject> {
  const out = new Map<string, ReportObject>();
  for (const [namespace, gateways] of byNamespace(result)) {
    const results: ReportResult[] = [];
    for (const g of gateways)
      for (const f of g.findings) {
        const fresh = resultOf(g, f, options.nowSeconds);
        const seen = options.seen?.get(resultKey(fresh));
        results.push(seen === undefined ? fresh : { ...fresh, timestamp: { seconds: seen, nanos: 0 } });
      }
    out.set(namespace, reportOf(api, namespace, results, options.maxResults ?? MAX_RESULTS));
  }
  return out;
}

/** JSON with object keys sorted, and without `source` (a constant, pruned where the CRD lacks it). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.keys(value)
      .filter((k) => k !== 'source')
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/**
 * What the writer compares to decide whether a stored report needs an update.
 * The API server returns custom objects with their keys sorted, so key order
 * must not count.
 */
export function reportContent(report: {
  metadata?: { annotations?: unknown };
  summary?: unknown;
  results?: unknown;
}): string {
  const annotations = (report.metadata?.annotations ?? {}) as Record<string, unknown>;
  return canonical({
    omitted: annotations[OMITTED_ANNOTATION] ?? null,
    summary: report.summary ?? null,
    results: report.results ?? [],
  });
}

/** First-seen timestamps of the results a stored report holds. */
export function seenTimestamps(report: { results?: unknown }): Map<string, number> {
  const out = new Map<string, number>();
  if (!Array.isArray(report.results)) return out;
  for (const r of report.results as Partial<ReportResult>[]) {
    if (!r || !Array.isArray(r.resources) || typeof r.rule !== 'string' || !r.properties) continue;
    const seconds = r.timestamp?.seconds;
    if (typeof seconds === 'number') out.set(resultKey(r as ReportResult), seconds);
  }
  return out;
}
