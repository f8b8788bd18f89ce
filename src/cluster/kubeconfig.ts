/**
 * Finds the Kubernetes credentials to use, in this order: an explicit
 * --kubeconfig; the in-cluster service account; the KUBECONFIG variable;
 * ~/.kube/config. Unlike KubeConfig.loadFromDefault, it says "none" instead of
 * silently falling back to http://localhost:8080, so callers can tell "no
 * cluster here" apart from "a cluster that does not answer".
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface KubeconfigOptions {
  /** The --kubeconfig flag. */
  readonly kubeconfig?: string | undefined;
  /** Environment to read KUBECONFIG and KUBERNETES_SERVICE_HOST from (default: process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Home directory for ~/.kube/config (default: os.homedir()). */
  readonly home?: string;
  /** Token file that marks an in-cluster pod (tests point it elsewhere). */
  readonly serviceAccountTokenFile?: string;
}

export type KubeconfigSource =
  | { readonly kind: 'flag'; readonly path: string }
  | { readonly kind: 'in-cluster' }
  | { readonly kind: 'env'; readonly paths: readonly string[] }
  | { readonly kind: 'home'; readonly path: string };

/** Which credentials would be used, without loading them; undefined when there are none. */
export function findKubeconfig(options: KubeconfigOptions = {}): KubeconfigSource | undefined {
  const env = options.env ?? process.env;
  if (options.kubeconfig !== undefined && options.kubeconfig !== '')
    return { kind: 'flag', path: options.kubeconfig };
  if (env['KUBERNETES_SERVICE_HOST'] && env['KUBERNETES_SERVICE_PORT']) {
    if (existsSync(options.serviceAccountTokenFile ?? SERVICE_ACCOUNT_TOKEN)) return { kind: 'in-cluster' };
  }
  const fromEnv = (env['KUBECONFIG'] ?? '')
    .split(delimiter)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (fromEnv.length > 0) return { kind: 'env', paths: fromEnv };
  const home = options.home ?? homedir();
  const path = join(home, '.kube', 'config');
  if (existsSync(path)) return { kind: 'home', path };
  return undefined;
}

function describeKubeconfigSource(source: KubeconfigSource): string {
  switch (source.kind) {
    case 'flag':
      return `kubeconfig ${source.path} (--kubeconfig)`;
    case 'in-cluster':
      return 'in-cluster service account';
    case 'env':
      return `kubeconfig ${source.paths.join(delimiter)} (KUBECONFIG)`;
    case 'home':
      return `kubeconfig ${source.path}`;
  }
}

export interface LoadedKubeconfig {
  readonly kc: KubeConfig;
  readonly source: KubeconfigSource;
  /** Human description: where the credentials came from and which server they name. */
  readonly description: string;
  readonly server: string;
}

export const NO_KUBECONFIG_REASON =
  'no Kubernetes credentials found (not running in a cluster, no --kubeconfig, KUBECONFIG unset, ~/.kube/config missing)';

/** Loads the credentials findKubeconfig chose; throws a one-line error when they are unusable. */
export function loadKubeconfig(options: KubeconfigOptions = {}): LoadedKubeconfig {
  const source = findKubeconfig(options);
  if (!source) throw new Error(NO_KUBECONFIG_REASON);
  const kc = new KubeConfig();
  try {
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

/** The first line of an error's message, for logs and readiness reasons. */
export function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (message.split('\n')[0] ?? '').slice(0, 300) || 'unknown error';
}
