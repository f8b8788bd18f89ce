/**
 * The audit inside `serve`: loads the cluster credentials, and runs the
 * background loop over the cluster's Gateways with the same rule context the
 * admission routes use. Without a cluster there is nothing to audit, and the
 * server says so once.
 */
import { errorMessage } from '../error-text.js';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { RuleInputs } from '../inputs/rule-inputs.js';
import type { loadKubeconfig as LoadKubeconfig } from '../kube/kubeconfig.js';
import type { LeaderElector } from '../kube/lease.js';
import { kubeClient, type KubeClient } from '../kube/client.js';
import { findKubeconfig, NO_KUBECONFIG_REASON } from '../kube/kubeconfig-source.js';
import { gatewayPageFetcher, gatewayPages } from './gateway-pages.js';
import { judgeWithContext } from './judge.js';
import { startAuditLoop } from './loop.js';
import { auditMetrics } from './metrics.js';
import { startReportWriter } from './report-writer.js';
import type { AuditReportsMode } from '../config/serve.js';
import { REPORT_APIS } from './reports.js';

export interface ServerAuditDeps {
  readonly intervalMs: number;
  /**
   * The Lease that picks the one replica that audits, started by the server
   * (server/lease.ts), which stops it; undefined when it could not start one.
   */
  readonly leadership: LeaderElector | undefined;
  /** Report objects written after each pass (`--audit-reports`); default none. */
  readonly reports?: AuditReportsMode;
  readonly kubeconfig: string | undefined;
  readonly logger: Logger;
  readonly registry: Registry;
  /** The rule inputs admission uses: the context in force, the allocated-IP lookups, their changes. */
  readonly inputs: RuleInputs;
  /** Set when --dev ignored an unusable kubeconfig (devIgnoredKubeconfig): nothing to audit. */
  readonly noCluster?: string | undefined;
  /** Where to look for credentials (tests); defaults to process.env and the home directory. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly home?: string;
}

export interface ServerAudit {
  /** For /readyz?verbose; the audit never holds readiness back. */
  describe(): Readonly<Record<string, unknown>>;
  /** Stops the loop and the report writer; the Lease is the server's to stop. */
  stop(): Promise<void>;
}

/** Smaller than the command's 250: parsing a page is among the longest stretches a pass holds the event loop. */
const PAGE_SIZE = 100;
const PAGE_TIMEOUT_MS = 30_000;
/** After a change of ranges, revision or allocations: long enough to coalesce a burst of events. */
const DEBOUNCE_MS = 2_000;

function off(reason: string): ServerAudit {
  return {
    describe: () => ({ enabled: false, reason }),
    stop: () => Promise.resolve(),
  };
}

/**
 * The cluster's credentials and a client, or why there is no cluster to audit.
 * Without credentials the Kubernetes client is never loaded.
 */
async function loadCluster(deps: ServerAuditDeps): Promise<
  | {
      readonly loaded: ReturnType<typeof LoadKubeconfig>;
      readonly client: KubeClient;
    }
  | { readonly reason: string }
> {
  const where = {
    kubeconfig: deps.kubeconfig,
    ...(deps.env ? { env: deps.env } : {}),
    ...(deps.home ? { home: deps.home } : {}),
  };
  if (deps.noCluster !== undefined) return { reason: 'no cluster to audit (--dev ignored the kubeconfig)' };
  if (!findKubeconfig(where)) return { reason: `no cluster to audit: ${NO_KUBECONFIG_REASON}` };
  const { loadKubeconfig } = await import('../kube/kubeconfig.js');
  try {
    const loaded = loadKubeconfig(where);
    return { loaded, client: kubeClient(loaded.kc) };
  } catch (err) {
    return { reason: `no cluster to audit: ${errorMessage(err)}` };
  }
}

/** The judge for a pass: admission's rule context now, or undefined while the ranges are unknown. */
function judgeNow(deps: ServerAuditDeps) {
  const now = deps.inputs.current();
  return now ? judgeWithContext(now.ctx, deps.inputs.prefetch) : undefined;
}

/** The report writer of `--audit-reports`, writing only while `leading`; none for `none`. */
function reportWriter(mode: AuditReportsMode, client: KubeClient, logger: Logger, leading: () => boolean) {
  return mode === 'none' ? undefined : startReportWriter({ client, api: REPORT_APIS[mode], logger, leading });
}

export async function startServerAudit(deps: ServerAuditDeps): Promise<ServerAudit> {
  const log = deps.logger.child({ component: 'audit' });
  if (deps.intervalMs === 0) return off('--audit-interval=0');
  const found = await loadCluster(deps);
  if ('reason' in found) {
    log.info(found.reason);
    return off(found.reason);
  }
  const { loaded, client } = found;
  const elector = deps.leadership;
  if (!elector) {
    client.close();
    log.info('no audit lease');
    return off('no audit lease');
  }
  const fetch = gatewayPageFetcher(client, { pageSize: PAGE_SIZE, timeoutMs: PAGE_TIMEOUT_MS });
  const metrics = auditMetrics(deps.registry);
  const mode = deps.reports ?? 'none';
  const writer = reportWriter(mode, client, log, () => elector.isLeader());
  const running = startAuditLoop({
    intervalMs: deps.intervalMs,
    debounceMs: DEBOUNCE_MS,
    listPages: () => gatewayPages(fetch),
    judge: () => judgeNow(deps),
    onInputsChange: (listener) => deps.inputs.onChange(listener),
    leading: () => elector.isLeader(),
    ...(writer ? { afterPass: (result) => writer.write(result) } : {}),
    metrics,
    logger: log,
  });
  // The Lease may have been won before this subscribes: the gauge starts from the state now, and
  // the loop's first pass (after its debounce) asks the elector itself.
  metrics.leader.set(elector.isLeader() ? 1 : 0);
  elector.onChange(() => {
    const leader = elector.isLeader();
    metrics.leader.set(leader ? 1 : 0);
    running.trigger(leader ? 'became the audit leader' : 'lost the audit lease');
  });
  log.info(
    { intervalSeconds: deps.intervalMs / 1000, server: loaded.server, lease: elector.lease, reports: mode },
    'audit started; the replica holding the lease audits',
  );
  return {
    describe: () => ({
      enabled: true,
      ...running.describe(),
      election: elector.describe(),
      ...(writer ? { reports: writer.describe() } : {}),
    }),
    async stop() {
      // The report writer sends nothing more from here on, and a running pass, no longer leading
      // once the server releases the Lease (at the same time), stops before its next page.
      await Promise.all([writer?.stop(), running.stop()]);
      client.close();
    },
  };
}
