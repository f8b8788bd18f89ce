/**
 * What `routability-webhook policy` asks the cluster: which GEP-5093 revision
 * its Gateway CRD carries (`--gep-revision auto`, and the check that a fixed
 * revision matches it before `--apply`), and the ordered server-side apply
 * that says, when it stops, what it applied and what it left behind.
 */
import { foundRevisionNote, revisionOfGatewayCrd, describeCrdRevision } from '../crd/gep-revision.js';
import { GATEWAY_CRD_NAME } from '../crd/patch.js';
import { applyPath } from '../policy/index.js';
import type { GepRevision } from '../rules/index.js';
import { errorMessage } from '../error-text.js';
import { EXIT_OK, writeLine } from '../io.js';
import type { KubeClient } from '../kube/client.js';
import type { CommandRun } from './command.js';

export type RevisionFlag = GepRevision | 'auto';

export const OFFLINE_HINT =
  'give --gep-revision provisional or experimental to print a policy without a cluster';

/** A client from the kubeconfig, or the reason there is none. */
export async function clusterClient(
  kubeconfig: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<{ ok: true; client: KubeClient } | { ok: false; error: string }> {
  // Loaded only here, so printing a fixed revision never pays for the Kubernetes client.
  const [{ loadKubeconfig }, { kubeClient }] = await Promise.all([
    import('../kube/kubeconfig.js'),
    import('../kube/client.js'),
  ]);
  try {
    return { ok: true, client: kubeClient(loadKubeconfig({ kubeconfig, env }).kc) };
  } catch (err) {
    return { ok: false, error: errorMessage(err) };
  }
}

/** The CRD as the API server sends it, or undefined when it answers 404 (Gateway API not installed). */
async function readCrd(client: KubeClient): Promise<unknown> {
  const { describeKubeError, httpStatusOf } = await import('../kube/errors.js');
  try {
    return await client.json({
      path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${GATEWAY_CRD_NAME}`,
      timeoutMs: 15_000,
    });
  } catch (err) {
    if (httpStatusOf(err) === 404) return undefined;
    throw new Error(`cannot read crd/${GATEWAY_CRD_NAME} from ${client.server}: ${describeKubeError(err)}`);
  }
}

export type RevisionAnswer =
  | { readonly ok: true; readonly revision: GepRevision; readonly note: string }
  | { readonly ok: false; readonly error: string };

/**
 * The revision the policy follows, from the flag and the cluster's Gateway
 * CRD, decided as serve's `--gep-revision auto` does: the CRD's revision
 * when it carries one; provisional when nothing can carry the field (no CRD,
 * or a CRD without routability); no answer when the schema matches neither.
 * A fixed revision that differs from the CRD's is refused: its policy would
 * refuse Gateways the CRD admits (an experimental policy on a provisional CRD
 * refuses every `External`).
 */
export function decidePolicyRevision(flag: RevisionFlag, crd: unknown, server: string): RevisionAnswer {
  const where = `crd/${GATEWAY_CRD_NAME} on ${server}`;
  if (crd === undefined)
    return {
      ok: true,
      revision: flag === 'auto' ? 'provisional' : flag,
      note: `${where}: not found (Gateway API is not installed)`,
    };
  const found = revisionOfGatewayCrd(crd);
  if (found.kind === 'revision') {
    if (flag !== 'auto' && flag !== found.revision)
      return {
        ok: false,
        error:
          `--gep-revision ${flag}: ${where} carries the ${describeCrdRevision(found)}; a ${flag} policy would refuse ` +
          `Gateways that CRD admits. Run with --gep-revision auto (or ${found.revision})`,
      };
    return { ok: true, revision: found.revision, note: `${where}: ${describeCrdRevision(found)}` };
  }
  if (found.kind === 'field-missing')
    return {
      ok: true,
      revision: flag === 'auto' ? 'provisional' : flag,
      note: `${where}: ${foundRevisionNote(found, 'provisional')} (the API server drops it: nothing to check yet)`,
    };
  if (flag === 'auto')
    return {
      ok: false,
      error: `--gep-revision auto: ${where}: ${describeCrdRevision(found)}; give --gep-revision provisional or experimental`,
    };
  return {
    ok: true,
    revision: flag,
    note: `${where}: ${describeCrdRevision(found)}; --gep-revision ${flag} as given`,
  };
}

/** Reads the CRD and decides; a failed read is an error naming the way out. */
export async function clusterRevision(flag: RevisionFlag, client: KubeClient): Promise<RevisionAnswer> {
  let crd: unknown;
  try {
    crd = await readCrd(client);
  } catch (err) {
    return {
      ok: false,
      error: `--gep-revision ${flag}: ${errorMessage(err)}${flag === 'auto' ? `; ${OFFLINE_HINT}` : ''}`,
    };
  }
  return decidePolicyRevision(flag, crd, client.server);
}

const nameOf = (o: Record<string, unknown>) =>
  `${String(o['kind'])}/${String((o['metadata'] as { name: string }).name)}`;

/** What a stop after `applied` objects leaves in force, for the failure message. */
function leftBehind(
  applied: readonly Record<string, unknown>[],
  rest: readonly Record<string, unknown>[],
): string {
  const bound = applied.filter((o) => o['kind'] === 'ValidatingAdmissionPolicyBinding').map(nameOf);
  const lines = [
    `applied: ${applied.length > 0 ? applied.map(nameOf).join(', ') : 'nothing'}`,
    `not applied: ${rest.map(nameOf).join(', ')}`,
    bound.length === 0
      ? 'No binding was applied, so no policy is in force and no write is refused. Run the same command again to finish.'
      : `In force: ${bound.join(', ')} (their policies and params were applied first). Run the same command again to finish, ` +
        `or remove them: kubectl delete ${bound.map((b) => b.replace('ValidatingAdmissionPolicyBinding/', 'validatingadmissionpolicybinding/')).join(' ')}`,
  ];
  return lines.join('\n');
}

/** Server-side applies the objects in their order; on the first failure, says what is left behind. */
export async function applyInOrder(
  objects: readonly Record<string, unknown>[],
  client: KubeClient,
  run: CommandRun,
): Promise<number> {
  const { describeKubeError } = await import('../kube/errors.js');
  for (const [i, object] of objects.entries()) {
    try {
      await client.json({
        method: 'PATCH',
        path: applyPath(object),
        query: { fieldManager: 'routability-webhook', force: 'true' },
        body: object,
        contentType: 'application/apply-patch+yaml',
        timeoutMs: 15_000,
      });
    } catch (err) {
      return run.fail(
        `cannot apply ${nameOf(object)} on ${client.server}: ${describeKubeError(err)}\n` +
          leftBehind(objects.slice(0, i), objects.slice(i)),
      );
    }
    writeLine(run.io.stdout, `${nameOf(object)} applied (${client.server})`);
  }
  return EXIT_OK;
}
