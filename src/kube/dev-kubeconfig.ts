/**
 * `serve --dev` on a workstation: does the kubeconfig found name a cluster at
 * all? A missing or empty file, no current context, or a context naming a
 * cluster or user the file does not define (what `kind delete cluster` leaves
 * behind) is "no cluster": service ranges and the GEP-5093 revision then take
 * their offline defaults, and one line says which kubeconfig was ignored and
 * why. A kubeconfig that names a server is used whether or not that server
 * answers (a cluster that is down keeps the server not ready, naming the flags).
 * Without --dev none of this applies: an unusable kubeconfig is a cluster that
 * cannot be read.
 */
import { errorMessage } from '../error-text.js';
import { existsSync, readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { KubeConfig } from './kubeconfig-model.js';
import { describeKubeconfigSource, findKubeconfig, type KubeconfigOptions } from './kubeconfig-source.js';
import type { KubeconfigSource } from './kubeconfig-source.js';

/** Why the file the source reads first holds no kubeconfig at all, if it does not. */
function fileProblem(source: KubeconfigSource): string | undefined {
  if (source.kind === 'in-cluster') return undefined;
  const path = source.kind === 'env' ? source.paths[0]! : source.path;
  if (!existsSync(path)) return `${path} does not exist`;
  try {
    if (readFileSync(path, 'utf8').trim() === '') return `${path} is empty`;
  } catch (err) {
    return `cannot read ${path}: ${errorMessage(err)}`;
  }
  return undefined;
}

/** Why the loaded kubeconfig names no cluster to talk to, if it does not. */
function contextProblem(kc: KubeConfig): string | undefined {
  const name = kc.getCurrentContext();
  if (!name) return 'its current-context is empty';
  const context = kc.getContextObject(name);
  if (!context) return `its current-context "${name}" names no context in it`;
  if (!kc.getCluster(context.cluster))
    return `context "${name}" names cluster "${context.cluster}", which it does not define`;
  if (context.user && !kc.getUser(context.user))
    return `context "${name}" names user "${context.user}", which it does not define`;
  return undefined;
}

/**
 * With --dev: the reason (for /readyz?verbose) when the kubeconfig found is
 * ignored, after logging the one line that says so; undefined when there is
 * none (already "no cluster") or it names a cluster.
 */
export async function devIgnoredKubeconfig(
  options: KubeconfigOptions,
  logger: Logger,
): Promise<string | undefined> {
  const source = findKubeconfig(options);
  if (!source || source.kind === 'in-cluster') return undefined;
  let problem = fileProblem(source);
  if (problem === undefined) {
    const { oneLine, readKubeconfig } = await import('./kubeconfig.js');
    try {
      problem = contextProblem(readKubeconfig(source));
    } catch (err) {
      problem = `cannot load it: ${oneLine(err)}`;
    }
  }
  if (problem === undefined) return undefined;
  const which = describeKubeconfigSource(source);
  logger
    .child({ component: 'cluster' })
    .warn(
      { kubeconfig: which, reason: problem },
      `--dev: ignoring ${which}: ${problem}; no cluster, so service ranges and the GEP-5093 revision take their offline defaults`,
    );
  return `--dev ignored ${which}: ${problem}`;
}
