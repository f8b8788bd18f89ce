/**
 * Where the GEP-5093 revision the rules use comes from (the flag, or the
 * cluster's Gateway CRD), and the choice between them. Free of the Kubernetes
 * client: `serve --service-cidr` without credentials never loads it.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { GepRevision, GepRevisionSetting } from '../../rules/index.js';
import type { RevisionSource } from './types.js';
import { GEP_REVISION_FLAG_HINT } from './crd-revision-decision.js';
import { revisionMetrics } from './crd-revision-metrics.js';
import { findKubeconfig, type KubeconfigOptions } from '../../kube/kubeconfig-source.js';
import type { BackoffOptions } from '../../kube/watch.js';

export type { RevisionSource } from './types.js';

/** A revision that never changes: the flag's, or auto's provisional when there is no cluster. */
export function fixedRevisionSource(
  revision: GepRevision,
  why: string,
  deps: { readonly logger: Logger; readonly registry: Registry },
): RevisionSource {
  revisionMetrics(deps.registry).setRevision(revision);
  deps.logger.info(
    { gepRevision: revision, source: why },
    `GEP-5093 revision in force: ${revision} (${why})`,
  );
  return {
    current: () => revision,
    readiness: () => ({ ready: true }),
    describe: () => ({ revision, source: why }),
    close: async () => {},
  };
}

function unreadable(reason: string, logger: Logger, registry: Registry): RevisionSource {
  revisionMetrics(registry).setRevision(undefined);
  logger.error({ gepRevision: 'auto' }, reason);
  return {
    current: () => undefined,
    readiness: () => ({ ready: false, reason }),
    describe: () => ({ revision: null, source: 'auto: the Gateway CRD of the cluster', reason }),
    close: async () => {},
  };
}

export interface RevisionSelectDeps {
  readonly setting: GepRevisionSetting;
  readonly logger: Logger;
  readonly registry: Registry;
  /** --kubeconfig, and where else to look (tests). */
  readonly kubeconfigOptions: KubeconfigOptions;
  /** Set when --dev ignored an unusable kubeconfig (devIgnoredKubeconfig): auto has no cluster to follow. */
  readonly noCluster?: string | undefined;
  readonly backoff?: Partial<BackoffOptions>;
}

/**
 * --gep-revision provisional|experimental: fixed. auto: the cluster's Gateway
 * CRD, watched live, when there are credentials; provisional without any
 * (no cluster means no CRD to read, and provisional is the revision every
 * behaviour from before the revisions existed keeps; docs/gep-revisions.md),
 * or when --dev ignored an unusable kubeconfig.
 * Otherwise credentials that cannot be loaded are a cluster that cannot be
 * read: not ready, naming the flag.
 */
export async function selectRevisionSource(deps: RevisionSelectDeps): Promise<RevisionSource> {
  const log = deps.logger.child({ component: 'gep-revision' });
  if (deps.setting !== 'auto')
    return fixedRevisionSource(deps.setting, `--gep-revision ${deps.setting}`, {
      logger: log,
      registry: deps.registry,
    });
  const offline = { logger: log, registry: deps.registry };
  if (deps.noCluster !== undefined)
    return fixedRevisionSource(
      'provisional',
      '--gep-revision auto without a cluster (--dev ignored the kubeconfig)',
      offline,
    );
  if (!findKubeconfig(deps.kubeconfigOptions))
    return fixedRevisionSource(
      'provisional',
      '--gep-revision auto without a cluster (no Kubernetes credentials)',
      offline,
    );
  const [{ loadKubeconfig, oneLine }, { startGatewayCrdRevisionWatch }, { kubeClient }] = await Promise.all([
    import('../../kube/kubeconfig.js'),
    import('./crd-revision.js'),
    import('../../kube/client.js'),
  ]);
  let loaded;
  try {
    loaded = loadKubeconfig(deps.kubeconfigOptions);
  } catch (err) {
    return unreadable(
      `cannot read the Gateway CRD: ${oneLine(err)}; ${GEP_REVISION_FLAG_HINT}`,
      log,
      deps.registry,
    );
  }
  return startGatewayCrdRevisionWatch({
    client: kubeClient(loaded.kc),
    description: loaded.description,
    logger: log,
    registry: deps.registry,
    ...(deps.backoff ? { backoff: deps.backoff } : {}),
  });
}
