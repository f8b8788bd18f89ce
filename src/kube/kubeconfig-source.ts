/**
 * Which Kubernetes credentials would be used, without loading them or the
 * Kubernetes client (whose import alone costs tens of MiB): callers that only
 * need to know whether there is a cluster at all ask here first.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

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

/**
 * Which credentials would be used, without loading them; undefined when there
 * are none. The order is controller-runtime's (and so that of most Kubernetes
 * controllers written in Go): the --kubeconfig flag; the KUBECONFIG variable;
 * the in-cluster service account; ~/.kube/config. KUBECONFIG before the
 * service account lets a pod that sets it (to reach another cluster, or
 * through a proxy) be obeyed rather than silently overridden.
 */
export function findKubeconfig(options: KubeconfigOptions = {}): KubeconfigSource | undefined {
  const env = options.env ?? process.env;
  if (options.kubeconfig !== undefined && options.kubeconfig !== '')
    return { kind: 'flag', path: options.kubeconfig };
  const fromEnv = (env['KUBECONFIG'] ?? '')
    .split(delimiter)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (fromEnv.length > 0) return { kind: 'env', paths: fromEnv };
  if (env['KUBERNETES_SERVICE_HOST'] && env['KUBERNETES_SERVICE_PORT']) {
    if (existsSync(options.serviceAccountTokenFile ?? SERVICE_ACCOUNT_TOKEN)) return { kind: 'in-cluster' };
  }
  const home = options.home ?? homedir();
  const path = join(home, '.kube', 'config');
  if (existsSync(path)) return { kind: 'home', path };
  return undefined;
}

export function describeKubeconfigSource(source: KubeconfigSource): string {
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

export const NO_KUBECONFIG_REASON =
  'no Kubernetes credentials found (not running in a cluster, no --kubeconfig, KUBECONFIG unset, ~/.kube/config missing)';
