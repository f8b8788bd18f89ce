/**
 * Who this replica is, for the audit lease: the pod's name and namespace from
 * the downward API (POD_NAME, POD_NAMESPACE, set by the chart), else the
 * service account's namespace file and the host name (a pod's host name is its
 * name), else `default`.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

const NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export function leaseIdentity(
  env: Readonly<Record<string, string | undefined>>,
  namespaceFile = NAMESPACE_FILE,
): { identity: string; namespace: string } {
  let namespace = env['POD_NAMESPACE'];
  if (!namespace) {
    try {
      namespace = readFileSync(namespaceFile, 'utf8').trim();
    } catch {
      namespace = undefined;
    }
  }
  return { identity: env['POD_NAME'] || hostname(), namespace: namespace || 'default' };
}
