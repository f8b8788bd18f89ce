/**
 * The rule inputs `serve` follows, assembled: where the service ranges (and
 * the allocated-IP lookups) come from (ranges/select.ts) and the GEP-5093
 * revision in force (revision/crd-revision-source.ts: --gep-revision, or the
 * cluster's Gateway CRD with auto), as the one object the admission routes
 * and the audit read (rule-inputs.ts). With --dev, an unusable kubeconfig is
 * no cluster for all of them (noCluster says why, for the audit and the
 * policy params too).
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ServeConfig } from '../config/serve.js';
import { devIgnoredKubeconfig } from '../kube/dev-kubeconfig.js';
import { selectClusterSources } from './ranges/select.js';
import { selectRevisionSource } from './revision/crd-revision-source.js';
import type { RevisionSource } from './revision/types.js';
import { ruleInputs, type RuleInputs } from './rule-inputs.js';

export interface StartedInputs {
  readonly inputs: RuleInputs;
  /** The revision source alone, for the server's `listening` line. */
  readonly revision: RevisionSource;
  /** Set when --dev ignored an unusable kubeconfig: no cluster, and why. */
  readonly noCluster: string | undefined;
}

export async function startRuleInputs(
  config: ServeConfig,
  logger: Logger,
  registry: Registry,
): Promise<StartedInputs> {
  const noCluster = config.dev
    ? await devIgnoredKubeconfig({ kubeconfig: config.kubeconfig }, logger)
    : undefined;
  const sources = await selectClusterSources({ config, logger, registry, noCluster });
  const revision = await selectRevisionSource({
    setting: config.gepRevision,
    logger,
    registry,
    kubeconfigOptions: { kubeconfig: config.kubeconfig },
    noCluster,
  });
  return { inputs: ruleInputs({ settings: config, sources, revision }), revision, noCluster };
}
