/**
 * A kubeconfig in memory: its clusters, users and contexts, read from a file
 * (YAML), from the pod's service account, or given as objects; several files
 * merged as KUBECONFIG lists them. The shapes are @kubernetes/client-node's
 * (camelCase: caFile, certData, skipTLSVerify, authProvider...), so that the
 * rare credentials this module does not apply itself (auth-provider plugins,
 * proxies: kubeconfig-auth.ts) are handed to that client unchanged, and it is
 * only loaded then. The credentials are applied per request
 * (applyToHTTPSOptions): tokens in files and exec plugins rotate.
 */
import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { dirname, isAbsolute, join } from 'node:path';
import type https from 'node:https';
import { parse } from 'yaml';
import { applyCredentials, type CredentialState } from './kubeconfig-auth.js';
import type { Cluster, Context, ExecConfig, KubeConfigOptions, User } from './kubeconfig-types.js';

export type { Cluster, Context, ExecConfig, KubeConfigOptions, User } from './kubeconfig-types.js';

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The entries of one list (`clusters`, `users`, `contexts`): each a name and its body. */
function entries(
  doc: Record<string, unknown>,
  list: string,
  body: string,
): Array<{ name: string; body: Record<string, unknown> | undefined; at: string }> {
  const value = doc[list];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Error(`${list} must be a list`);
  return value.map((item: unknown, i) => {
    const at = `${list}[${i}]`;
    const name = text(record(item)?.['name']);
    if (name === undefined) throw new Error(`${at}.name is missing`);
    return { name, body: record(record(item)?.[body]), at };
  });
}

function clusterOf(entry: { name: string; body: Record<string, unknown> | undefined; at: string }): Cluster {
  const c = entry.body;
  if (!c) throw new Error(`${entry.at}.cluster is missing`);
  const server = text(c['server']);
  if (server === undefined) throw new Error(`${entry.at}.cluster.server is missing`);
  return {
    name: entry.name,
    server: server.replace(/\/$/, ''),
    caData: text(c['certificate-authority-data']),
    caFile: text(c['certificate-authority']),
    skipTLSVerify: c['insecure-skip-tls-verify'] === true,
    tlsServerName: text(c['tls-server-name']),
    proxyUrl: text(c['proxy-url']),
  };
}

function execOf(value: unknown, at: string): ExecConfig | undefined {
  const e = record(value);
  if (!e) return undefined;
  const command = text(e['command']);
  if (command === undefined) throw new Error(`${at}.exec.command is missing`);
  const args = Array.isArray(e['args']) ? e['args'].map(String) : undefined;
  const env = Array.isArray(e['env'])
    ? e['env'].map((v: unknown) => ({
        name: String(record(v)?.['name'] ?? ''),
        value: String(record(v)?.['value'] ?? ''),
      }))
    : undefined;
  return { command, args, env, apiVersion: text(e['apiVersion']) };
}

function userOf(entry: { name: string; body: Record<string, unknown> | undefined; at: string }): User {
  const u = entry.body ?? {};
  const provider = record(u['auth-provider']);
  const tokenFile = text(u['token-file']);
  return {
    name: entry.name,
    token: text(u['token']),
    certData: text(u['client-certificate-data']),
    certFile: text(u['client-certificate']),
    keyData: text(u['client-key-data']),
    keyFile: text(u['client-key']),
    username: text(u['username']),
    password: text(u['password']),
    exec: execOf(u['exec'], `${entry.at}.user`),
    // A token file is read again as it rotates, like the service account's.
    authProvider: provider
      ? { name: String(provider['name'] ?? ''), config: record(provider['config']) ?? {} }
      : tokenFile !== undefined
        ? { name: 'tokenFile', config: { tokenFile } }
        : undefined,
    impersonateUser: text(u['as']),
  };
}

function contextOf(entry: { name: string; body: Record<string, unknown> | undefined; at: string }): Context {
  const c = entry.body;
  if (!c) throw new Error(`${entry.at}.context is missing`);
  const cluster = text(c['cluster']);
  if (cluster === undefined) throw new Error(`${entry.at}.context.cluster is missing`);
  return { name: entry.name, cluster, user: text(c['user']), namespace: text(c['namespace']) };
}

function absolute(root: string, file: string | undefined): string | undefined {
  return file === undefined || isAbsolute(file) ? file : join(root, file);
}

export class KubeConfig {
  clusters: Cluster[] = [];
  users: User[] = [];
  contexts: Context[] = [];
  currentContext: string | undefined;
  /** Token-file reads, exec plugin answers and the delegate client, per set of credentials. */
  readonly state: CredentialState = { tokenFiles: new Map(), execCache: new Map() };

  /** The current-context's name ('' when the kubeconfig names none). */
  getCurrentContext(): string {
    return this.currentContext ?? '';
  }

  getContextObject(name: string | undefined): Context | undefined {
    return this.contexts.find((c) => c.name === name);
  }

  getCluster(name: string | undefined): Cluster | undefined {
    return this.clusters.find((c) => c.name === name);
  }

  getUser(name: string | undefined): User | undefined {
    return this.users.find((u) => u.name === name);
  }

  getCurrentCluster(): Cluster | undefined {
    const context = this.getContextObject(this.currentContext);
    return context ? this.getCluster(context.cluster) : undefined;
  }

  getCurrentUser(): User | undefined {
    const context = this.getContextObject(this.currentContext);
    return context ? this.getUser(context.user) : undefined;
  }

  /** Parses a kubeconfig's YAML; throws a one-line reason when it is not one. */
  loadFromString(yamlText: string): void {
    const parsed: unknown = parse(yamlText);
    const doc = record(parsed);
    if (!doc) throw new Error('not a kubeconfig (a YAML mapping with clusters, users and contexts)');
    this.clusters = entries(doc, 'clusters', 'cluster').map(clusterOf);
    this.users = entries(doc, 'users', 'user').map(userOf);
    this.contexts = entries(doc, 'contexts', 'context').map(contextOf);
    this.currentContext = text(doc['current-context']);
  }

  /** Reads a kubeconfig file; its relative file names are relative to its directory. */
  loadFromFile(path: string): void {
    this.loadFromString(readFileSync(path, 'utf8'));
    const root = dirname(path);
    for (const cluster of this.clusters) cluster.caFile = absolute(root, cluster.caFile);
    for (const user of this.users) {
      user.certFile = absolute(root, user.certFile);
      user.keyFile = absolute(root, user.keyFile);
      const tokenFile = text(user.authProvider?.config?.['tokenFile']);
      if (user.authProvider?.name === 'tokenFile' && tokenFile !== undefined)
        user.authProvider = { name: 'tokenFile', config: { tokenFile: absolute(root, tokenFile) } };
    }
  }

  loadFromOptions(options: KubeConfigOptions): void {
    this.clusters = [...options.clusters];
    this.users = [...options.users];
    this.contexts = [...options.contexts];
    this.currentContext = options.currentContext;
  }

  /**
   * The pod's service account: the API server from KUBERNETES_SERVICE_HOST and
   * _PORT, its CA, and its token read again as the kubelet rotates it.
   */
  loadFromCluster(root = SERVICE_ACCOUNT_DIR, env: NodeJS.ProcessEnv = process.env): void {
    const host = env['KUBERNETES_SERVICE_HOST'] ?? '';
    const port = env['KUBERNETES_SERVICE_PORT'] ?? '';
    const scheme = ['80', '8080', '8001'].includes(port) ? 'http' : 'https';
    const server = `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`;
    let namespace: string | undefined;
    try {
      namespace = readFileSync(join(root, 'namespace'), 'utf8');
    } catch {
      namespace = undefined;
    }
    this.loadFromOptions({
      clusters: [{ name: 'inCluster', server, caFile: join(root, 'ca.crt'), skipTLSVerify: false }],
      users: [
        {
          name: 'inClusterUser',
          authProvider: { name: 'tokenFile', config: { tokenFile: join(root, 'token') } },
        },
      ],
      contexts: [{ name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser', namespace }],
      currentContext: 'inClusterContext',
    });
  }

  /**
   * Adds another file's entries (KUBECONFIG's later files) as kubectl merges
   * them: the first file to define a cluster, user or context name keeps it
   * (k3s and kind name everything `default`, so two such files share names),
   * and the first file to set current-context keeps it. Without
   * `preserveContext` the other file's current-context replaces this one's.
   */
  mergeConfig(other: KubeConfig, preserveContext = false): void {
    if (other.currentContext && !(preserveContext && this.currentContext))
      this.currentContext = other.currentContext;
    const add = <T extends { name: string }>(mine: T[], theirs: readonly T[]): void => {
      for (const item of theirs) if (!mine.some((m) => m.name === item.name)) mine.push(item);
    };
    add(this.clusters, other.clusters);
    add(this.users, other.users);
    add(this.contexts, other.contexts);
  }

  /** Sets TLS material, headers and basic auth on a request's options for the current context. */
  async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    await applyCredentials(this, opts);
  }
}
