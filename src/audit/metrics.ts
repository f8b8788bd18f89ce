/** The background audit's Prometheus metrics. */
import type { Counter, Gauge, Registry } from 'prom-client';
import type { AuditResult } from './pass.js';
import { counter, gauge } from '../metric-registry.js';

export interface AuditMetrics {
  readonly findings: Gauge<'code' | 'scope'>;
  readonly violatingGateways: Gauge;
  readonly gateways: Gauge;
  readonly lastRun: Gauge;
  readonly duration: Gauge;
  readonly runs: Counter<'result'>;
  readonly leader: Gauge;
}

export function auditMetrics(registry: Registry): AuditMetrics {
  return {
    findings: gauge(registry, {
      name: 'routability_webhook_audit_findings',
      help: 'Findings of the last audit pass over the stored Gateways, by rule code and scope (spec or status).',
      labelNames: ['code', 'scope'] as const,
    }),
    violatingGateways: gauge(registry, {
      name: 'routability_webhook_audit_violating_gateways',
      help: 'Gateways whose stored addresses the last audit pass found in violation (a write of them would be denied under enforce).',
    }),
    gateways: gauge(registry, {
      name: 'routability_webhook_audit_gateways',
      help: 'Gateways judged by the last audit pass.',
    }),
    lastRun: gauge(registry, {
      name: 'routability_webhook_audit_last_run_timestamp_seconds',
      help: 'Unix time at which the last successful audit pass finished.',
    }),
    duration: gauge(registry, {
      name: 'routability_webhook_audit_duration_seconds',
      help: 'Wall-clock duration of the last successful audit pass.',
    }),
    leader: gauge(registry, {
      name: 'routability_webhook_audit_leader',
      help: 'Whether this replica holds the audit lease and runs the audit (1) or not (0).',
    }),
    runs: counter(registry, {
      name: 'routability_webhook_audit_runs_total',
      help: 'Audit passes, by result (success, error).',
      labelNames: ['result'] as const,
    }),
  };
}

/** A replica that does not audit exports no findings (Prometheus would otherwise sum stale copies). */
export function clearAudit(metrics: AuditMetrics): void {
  metrics.findings.reset();
  metrics.violatingGateways.set(0);
  metrics.gateways.set(0);
}

export function recordAudit(
  metrics: AuditMetrics,
  result: AuditResult,
  seconds: number,
  finishedAt: number,
): void {
  metrics.findings.reset();
  const perScope = new Map<string, { code: string; scope: string; count: number }>();
  for (const c of result.byCode) {
    const key = `${c.code}\0${c.check}`;
    const prior = perScope.get(key);
    perScope.set(key, { code: c.code, scope: c.check, count: (prior?.count ?? 0) + c.count });
  }
  for (const c of perScope.values()) metrics.findings.set({ code: c.code, scope: c.scope }, c.count);
  metrics.violatingGateways.set(
    result.flagged.filter((g) => g.findings.some((f) => f.severity === 'violation')).length,
  );
  metrics.gateways.set(result.gateways);
  metrics.duration.set(seconds);
  metrics.lastRun.set(finishedAt / 1000);
  metrics.runs.inc({ result: 'success' });
}
