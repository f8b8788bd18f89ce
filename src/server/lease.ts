/**
 * The audit Lease, started once by the server and handed to the audit (it
 * audits, and writes reports, only while this replica leads) and to the
 * policy params sync (it writes only then). None with the audit off
 * (--audit-interval=0) or without usable credentials: the audit then says
 * why, and every replica keeps the params (params-sync.ts).
 */
import type { Logger } from 'pino';
import { leaseIdentity } from '../audit/identity.js';
import type { ServeConfig } from '../config/serve.js';
import { kubeClient } from '../kube/client.js';
import { startLeaderElector, type LeaderElector } from '../kube/lease.js';
import { findKubeconfig, type KubeconfigOptions } from '../kube/kubeconfig-source.js';

export interface AuditLeaseParts {
  readonly config: Pick<
    ServeConfig,
    'auditIntervalMs' | 'auditLease' | 'auditLeaseDurationMs' | 'auditLeaseRetryPeriodMs' | 'kubeconfig'
  >;
  readonly logger: Logger;
  /** Set when --dev ignored an unusable kubeconfig: no cluster, no Lease. */
  readonly noCluster: string | undefined;
  /** Where to look for credentials and who this replica is (tests); default process.env and the home directory. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly home?: string;
}

/** The elector of the audit Lease in this pod's namespace, or undefined when there is no audit to lead. */
export async function startAuditLease(parts: AuditLeaseParts): Promise<LeaderElector | undefined> {
  const { config } = parts;
  if (config.auditIntervalMs === 0 || parts.noCluster !== undefined) return undefined;
  const where: KubeconfigOptions = {
    kubeconfig: config.kubeconfig,
    ...(parts.env ? { env: parts.env } : {}),
    ...(parts.home ? { home: parts.home } : {}),
  };
  if (!findKubeconfig(where)) return undefined;
  const { loadKubeconfig } = await import('../kube/kubeconfig.js');
  let client;
  try {
    client = kubeClient(loadKubeconfig(where).kc);
  } catch {
    return undefined; // the audit, loading the same credentials, says why
  }
  const who = leaseIdentity(parts.env ?? process.env);
  const elector = startLeaderElector({
    client,
    namespace: who.namespace,
    name: config.auditLease,
    identity: who.identity,
    // The Lease's log lines are the audit's, as they always were.
    logger: parts.logger.child({ component: 'audit' }),
    leaseDurationMs: config.auditLeaseDurationMs,
    renewEveryMs: config.auditLeaseRetryPeriodMs,
  });
  const owned = client;
  return {
    ...elector,
    stop: async () => {
      await elector.stop();
      owned.close();
    },
  };
}
