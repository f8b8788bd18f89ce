/**
 * The GEP-5093 revision the rules follow: fixed by --gep-revision, or (auto,
 * with a cluster) read from the cluster's Gateway CRD and followed live.
 *
 * The watch reads one object, `customresourcedefinitions/gateways.gateway.
 * networking.k8s.io` (apiextensions.k8s.io/v1), with list and watch narrowed by
 * a `metadata.name` field selector: that is what lets RBAC limit the server to
 * that one resource name. Once the CRD has been read, its last revision stays
 * in force through API outages (the watch restarts with backoff); a change of
 * CRD (an upgrade, a crd-patch) switches the revision at once, logged.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { GATEWAY_CRD_NAME } from '../../crd/patch.js';
import { decideRevision, GEP_REVISION_FLAG_HINT, type RevisionDecision } from './crd-revision-decision.js';
import { changeListeners } from '../ranges/changes.js';
import { revisionMetrics } from './crd-revision-metrics.js';
import type { RevisionSource } from './types.js';
import { clusterMetrics } from '../ranges/metrics.js';
import type { KubeClient } from '../../kube/client.js';
import { describeKubeError, httpStatusOf } from '../../kube/errors.js';
import { startResourceWatch, type BackoffOptions } from '../../kube/watch.js';

export type { RevisionSource } from './types.js';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const FIELD_SELECTOR = `metadata.name=${GATEWAY_CRD_NAME}`;

export interface GatewayCrdWatchOptions {
  readonly client: KubeClient;
  /** Where the credentials came from and the server, for logs and /readyz. */
  readonly description: string;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly backoff?: Partial<BackoffOptions>;
}

/** The log line of a new decision: error when undecidable, warn on a switch or a missing field. */
function logDecision(log: Logger, before: RevisionDecision | undefined, next: RevisionDecision): void {
  const fields = {
    gepRevision: next.revision ?? null,
    crdState: next.state,
    ...(next.generation !== undefined ? { crdGeneration: next.generation } : {}),
    ...(before ? { previousRevision: before.revision ?? null, previousCrdState: before.state } : {}),
  };
  if (next.revision === undefined) {
    log.error(fields, next.summary);
    return;
  }
  if (isSwitch(before, next)) {
    log.warn(fields, `GEP-5093 revision switched: ${before!.revision} → ${next.revision}; ${next.summary}`);
    return;
  }
  const line = `GEP-5093 revision in force: ${next.revision}; ${next.summary}`;
  if (next.state === 'field-missing' || next.state === 'not-installed') log.warn(fields, line);
  else log.info(fields, line);
}

/** A change from one decided revision to the other (not a first read, not to or from undecidable). */
function isSwitch(before: RevisionDecision | undefined, next: RevisionDecision): boolean {
  return (
    before !== undefined &&
    before.revision !== undefined &&
    next.revision !== undefined &&
    before.revision !== next.revision
  );
}

type CrdWatch = ReturnType<typeof startResourceWatch<KubernetesObject>>;

/** The list-and-watch of the one CRD, by name. */
function watchGatewayCrd(opts: GatewayCrdWatchOptions, onChange: () => void): CrdWatch {
  const backoff: Partial<BackoffOptions> = opts.backoff ?? {};
  return startResourceWatch<KubernetesObject>({
    client: opts.client,
    group: 'apiextensions.k8s.io',
    resource: 'customresourcedefinitions',
    versions: ['v1'],
    fieldSelector: FIELD_SELECTOR,
    onChange,
    onAbsent: () =>
      opts.logger.error(
        { server: opts.description },
        `the API server serves no apiextensions.k8s.io/v1: cannot read the Gateway CRD; ${GEP_REVISION_FLAG_HINT}`,
      ),
    logger: opts.logger,
    metrics: clusterMetrics(opts.registry),
    backoff,
  });
}

/** Why no revision is known yet, for /readyz. */
function notReadReason(watch: CrdWatch, description: string): string {
  const state = watch.state();
  if (state === 'stopped') return 'the Gateway CRD watch is stopped';
  if (state === 'absent')
    return `the API server serves no apiextensions.k8s.io/v1, so crd/${GATEWAY_CRD_NAME} cannot be read: ${GEP_REVISION_FLAG_HINT}`;
  const error = watch.lastError();
  return error
    ? `cannot read crd/${GATEWAY_CRD_NAME} from ${description} (${error}; retrying): ${GEP_REVISION_FLAG_HINT}, or allow get, list and watch on it`
    : `waiting for the first read of crd/${GATEWAY_CRD_NAME} from ${description}`;
}

export function startGatewayCrdRevisionWatch(opts: GatewayCrdWatchOptions): RevisionSource {
  const metrics = revisionMetrics(opts.registry);
  let decision: RevisionDecision | undefined;
  let switchedAt: Date | undefined;
  let switches = 0;
  const changes = changeListeners();

  opts.logger.info(
    { gepRevision: 'auto', crd: GATEWAY_CRD_NAME, cluster: opts.description },
    'GEP-5093 revision: following the Gateway CRD of the cluster (--gep-revision auto)',
  );

  const watch = watchGatewayCrd(opts, () => {
    const objects = watch.objects();
    if (!objects) return;
    const next = decideRevision(objects.find((o) => o.metadata?.name === GATEWAY_CRD_NAME));
    const before = decision;
    if (before && before.summary === next.summary && before.revision === next.revision) return;
    decision = next;
    metrics.setRevision(next.revision);
    metrics.setFieldMissing(next.state === 'field-missing');
    if (isSwitch(before, next)) {
      switches++;
      switchedAt = new Date();
    }
    logDecision(opts.logger, before, next);
    if (before?.revision !== next.revision) changes.emit();
  });

  return {
    current: () => decision?.revision,
    readiness: () => {
      if (decision === undefined) return { ready: false, reason: notReadReason(watch, opts.description) };
      if (decision.revision === undefined) return { ready: false, reason: decision.summary };
      return { ready: true };
    },
    describe: () => ({
      revision: decision?.revision ?? null,
      source: 'auto: the Gateway CRD of the cluster',
      crd: GATEWAY_CRD_NAME,
      crdState: decision?.state ?? 'not read yet',
      ...(decision ? { summary: decision.summary } : { reason: notReadReason(watch, opts.description) }),
      ...(decision?.generation !== undefined ? { crdGeneration: decision.generation } : {}),
      switches,
      ...(switchedAt ? { lastSwitchAt: switchedAt.toISOString() } : {}),
      watch: watch.health(),
    }),
    onChange: changes.add,
    close: () => watch.stop(),
  };
}

/**
 * One read of the Gateway CRD (for `check --from-cluster`): the decision, or
 * an error naming the flag when the CRD cannot be read (a 404 is an answer:
 * Gateway API is not installed).
 */
export async function readGatewayCrdRevision(
  client: KubeClient,
  timeoutMs: number,
): Promise<RevisionDecision> {
  const server = client.server;
  let crd: unknown;
  try {
    crd = await client.json({ path: `${CRD_PATH}/${GATEWAY_CRD_NAME}`, timeoutMs });
  } catch (err) {
    if (httpStatusOf(err) === 404) return decideRevision(undefined);
    throw new Error(
      `cannot read crd/${GATEWAY_CRD_NAME} from ${server}: ${describeKubeError(err)}; ${GEP_REVISION_FLAG_HINT}`,
    );
  }
  return decideRevision(crd);
}
