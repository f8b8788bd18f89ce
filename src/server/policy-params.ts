/**
 * `serve --policy-params NAMESPACE/NAME`: starts the params sync
 * (params-sync.ts) with the cluster's credentials, the rule inputs and the
 * audit's Lease (started by the server, lease.ts). Its two counters are
 * always registered, so /metrics lists them (at 0) without the flag too;
 * the sync itself is loaded only with it.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ServeConfig } from '../config/serve.js';
import type { RuleInputs } from '../inputs/rule-inputs.js';
import { oneLine } from '../kube/errors.js';
import type { Leadership } from '../kube/lease.js';
import type { ParamsSync, ParamsSyncMetrics } from './params-sync.js';
import { counter } from '../metric-registry.js';

function paramsSyncMetrics(registry: Registry): ParamsSyncMetrics {
  return {
    writes: counter(registry, {
      name: 'routability_webhook_policy_params_writes_total',
      help: "Writes that changed the policy's params ConfigMap (--policy-params) to the service ranges in force.",
    }),
    failures: counter(registry, {
      name: 'routability_webhook_policy_params_failures_total',
      help: "Failed reads or writes of the policy's params ConfigMap; each is retried with backoff.",
    }),
  };
}

export interface PolicyParamsParts {
  readonly config: ServeConfig;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly inputs: RuleInputs;
  /** The audit Lease the server started (server/lease.ts); undefined when the audit is off. */
  readonly leadership: Leadership | undefined;
  /** Set when --dev ignored an unusable kubeconfig. */
  readonly noCluster: string | undefined;
}

/** The running sync, or undefined without --policy-params; a missing cluster is logged, not fatal. */
export async function startPolicyParams(
  parts: PolicyParamsParts,
): Promise<(Pick<ParamsSync, 'describe'> & { stop(): void }) | undefined> {
  const metrics = paramsSyncMetrics(parts.registry);
  const target = parts.config.policyParams;
  if (!target) return undefined;
  const log = parts.logger.child({ component: 'policy-params' });
  const off = (reason: string) => {
    log.error(
      { configMap: `${target.namespace}/${target.name}` },
      `policy params not kept in step: ${reason}`,
    );
    return { describe: () => ({ enabled: false, reason }), stop: () => undefined };
  };
  if (parts.noCluster !== undefined) return off('no cluster (--dev ignored the kubeconfig)');
  // The sync (and with it the policy generator) is loaded only when the flag asks for it.
  const [{ loadKubeconfig }, { kubeClient }, { startParamsSync }] = await Promise.all([
    import('../kube/kubeconfig.js'),
    import('../kube/client.js'),
    import('./params-sync.js'),
  ]);
  let client;
  try {
    client = kubeClient(loadKubeconfig({ kubeconfig: parts.config.kubeconfig }).kc);
  } catch (err) {
    return off(oneLine(err));
  }
  const sync = startParamsSync({
    client,
    ...target,
    inputs: parts.inputs,
    leadership: parts.leadership,
    logger: parts.logger,
    metrics,
  });
  const owned = client;
  return {
    describe: sync.describe,
    stop: () => {
      sync.stop();
      owned.close();
    },
  };
}
