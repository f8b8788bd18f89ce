/**
 * Finds the Kubernetes credentials to use, in this order: an explicit
 * --kubeconfig; the KUBECONFIG variable; the in-cluster service account;
 * ~/.kube/config (controller-runtime's order). Unlike KubeConfig.loadFromDefault, it says "none" instead of
 * silently falling back to http://localhost:8080, so callers can tell "no
 * cluster here" apart from "a cluster that does not answer".
 */
import { existsSync } from 'node:fs';
import { KubeConfig } from './kubeconfig-model.js';
import {
  describeKubeconfigSource,
  findKubeconfig,
  NO_KUBECONFIG_REASON,
  type KubeconfigOptions,
  type KubeconfigSource,
} from './kubeconfig-source.js';
import { oneLine } from './errors.js';

export { oneLine } from './errors.js';
export {
  describeKubeconfigSource,
  findKubeconfig,
  NO_KUBECONFIG_REASON,
  type KubeconfigOptions,
  type KubeconfigSource,
} from './kubeconfig-source.js';

export interface LoadedKubeconfig {
  readonly kc: KubeConfig;
  readonly source: KubeconfigSource;
  /** Human description: where the credentials came from and which server they name. */
  readonly description: string;
  readonly server: string;
}

/** Reads the files (or the service account) of one source into a KubeConfig; throws what the client throws. */
export function readKubeconfig(source: KubeconfigSource): KubeConfig {
  const kc = new KubeConfig();
  switch (source.kind) {
    case 'flag':
    case 'home':
      kc.loadFromFile(source.path);
      break;
    case 'in-cluster':
      kc.loadFromCluster();
      break;
    case 'env': {
      const [first, ...rest] = source.paths;
      kc.loadFromFile(first!);
      for (const path of rest) {
        if (!existsSync(path)) continue;
        const more = new KubeConfig();
        more.loadFromFile(path);
        kc.mergeConfig(more, true);
      }
      break;
    }
  }
  return kc;
}

/** Loads the credentials findKubeconfig chose; throws a one-line error when they are unusable. */
export function loadKubeconfig(options: KubeconfigOptions = {}): LoadedKubeconfig {
  const source = findKubeconfig(options);
  if (!source) throw new Error(NO_KUBECONFIG_REASON);
  let kc: KubeConfig;
  try {
    kc = readKubeconfig(source);
  } catch (err) {
    throw new Error(`cannot load ${describeKubeconfigSource(source)}: ${oneLine(err)}`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    throw new Error(`${describeKubeconfigSource(source)} has no current cluster (check current-context)`);
  return {
    kc,
    source,
    server: cluster.server,
    description: `${describeKubeconfigSource(source)}, server ${cluster.server}`,
  };
}
