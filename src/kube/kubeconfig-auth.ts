/**
 * A kubeconfig's credentials applied to one request: the cluster's CA, server
 * name and TLS verification, the user's client certificate and key, a bearer
 * token (inline, from a file read again every minute as it rotates, or from
 * an exec plugin, cached until its expirationTimestamp), basic auth and
 * impersonation. Two forms are left to @kubernetes/client-node, imported only
 * when a kubeconfig uses them: auth-provider plugins other than a token file
 * (oidc, and the azure and gcp providers kubectl dropped) and proxy-url (its
 * HTTP(S) and SOCKS proxy agents). Every other process never loads that
 * client, whose import alone costs tens of MiB.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type https from 'node:https';
import type { KubeConfig as ClientNodeConfig } from '@kubernetes/client-node';
import type { Cluster, KubeConfigOptions, User } from './kubeconfig-types.js';

/** A token file is read again after this long (the kubelet rotates projected tokens well before they expire). */
const TOKEN_FILE_REFRESH_MS = 60_000;
/** The most of an exec plugin's stdout and stderr kept. */
const MAX_EXEC_OUTPUT = 1024 * 1024;

export interface ExecCredentialStatus {
  readonly token?: string;
  readonly clientCertificateData?: string;
  readonly clientKeyData?: string;
  readonly expirationTimestamp?: string;
}

export interface CredentialState {
  readonly tokenFiles: Map<string, { token: string; readAt: number }>;
  readonly execCache: Map<string, { status: ExecCredentialStatus; expiresAt: number }>;
  delegate?: Promise<ClientNodeConfig>;
}

/** What the credentials are read from: a loaded kubeconfig (kubeconfig-model.ts). */
export interface CredentialSource extends KubeConfigOptions {
  getCurrentCluster(): Cluster | undefined;
  getCurrentUser(): User | undefined;
  readonly state: CredentialState;
}

/** The credentials this module does not apply itself. */
export function needsClientNode(cluster: Cluster | undefined, user: User | undefined): boolean {
  if (cluster?.proxyUrl) return true;
  const provider = user?.authProvider;
  if (!provider) return false;
  return !(isTokenFileProvider(user) || isExecProvider(user));
}

function isTokenFileProvider(user: User): boolean {
  return typeof user.authProvider?.config?.['tokenFile'] === 'string';
}

function isExecProvider(user: User): boolean {
  const provider = user.authProvider;
  return provider !== undefined && (provider.name === 'exec' || Boolean(provider.config?.['exec']));
}

function bytesOf(file: string | undefined, base64: string | undefined): Buffer | undefined {
  if (file) return readFileSync(file);
  if (base64) return Buffer.from(base64, 'base64');
  return undefined;
}

function tokenFromFile(state: CredentialState, path: string): string {
  const now = Date.now();
  const cached = state.tokenFiles.get(path);
  if (cached && now - cached.readAt <= TOKEN_FILE_REFRESH_MS) return cached.token;
  const token = readFileSync(path, 'utf8').trim();
  state.tokenFiles.set(path, { token, readAt: now });
  return token;
}

/** Runs the plugin and reads its ExecCredential from stdout. */
function runExec(exec: NonNullable<User['exec']>): Promise<ExecCredentialStatus> {
  const env = { ...process.env };
  for (const { name, value } of exec.env ?? []) env[name] = value;
  return new Promise((resolve, reject) => {
    const child = spawn(exec.command, [...(exec.args ?? [])], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (stdout.length < MAX_EXEC_OUTPUT) stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < MAX_EXEC_OUTPUT) stderr += d;
    });
    child.once('error', (err) => reject(new Error(`exec plugin ${exec.command}: ${err.message}`)));
    child.once('close', (code) => {
      if (code !== 0) {
        reject(new Error(`exec plugin ${exec.command} exited with ${code}: ${stderr.trim()}`));
        return;
      }
      try {
        const status = (JSON.parse(stdout) as { status?: ExecCredentialStatus }).status;
        if (typeof status !== 'object' || status === null) throw new Error('no status');
        resolve(status);
      } catch {
        reject(new Error(`exec plugin ${exec.command} printed no ExecCredential with a status`));
      }
    });
  });
}

/** The plugin's last answer while it has not expired; one with no expirationTimestamp is asked again each time. */
async function execCredential(state: CredentialState, user: User): Promise<ExecCredentialStatus | undefined> {
  const exec = user.exec ?? (user.authProvider?.config?.['exec'] as User['exec']);
  if (!exec) return undefined;
  const cached = state.execCache.get(user.name);
  if (cached && cached.expiresAt > Date.now()) return cached.status;
  state.execCache.delete(user.name);
  const status = await runExec(exec);
  const expiresAt = Date.parse(status.expirationTimestamp ?? '');
  if (Number.isFinite(expiresAt)) state.execCache.set(user.name, { status, expiresAt });
  return status;
}

function applyTls(cluster: Cluster | undefined, user: User | undefined, opts: https.RequestOptions): void {
  if (cluster?.skipTLSVerify) opts.rejectUnauthorized = false;
  if (cluster?.tlsServerName) opts.servername = cluster.tlsServerName;
  const ca = bytesOf(cluster?.caFile, cluster?.caData);
  if (ca) opts.ca = ca;
  const cert = bytesOf(user?.certFile, user?.certData);
  if (cert) opts.cert = cert;
  const key = bytesOf(user?.keyFile, user?.keyData);
  if (key) opts.key = key;
}

/** An exec plugin's client certificate, key and token. */
async function applyExec(
  state: CredentialState,
  user: User,
  into: { readonly opts: https.RequestOptions; readonly headers: Record<string, string> },
): Promise<void> {
  const status = await execCredential(state, user);
  if (status?.clientCertificateData) into.opts.cert = status.clientCertificateData;
  if (status?.clientKeyData) into.opts.key = status.clientKeyData;
  if (status?.token) into.headers['Authorization'] = `Bearer ${status.token}`;
}

async function applyUser(state: CredentialState, user: User, opts: https.RequestOptions): Promise<void> {
  const headers: Record<string, string> = {};
  if (user.impersonateUser) headers['Impersonate-User'] = user.impersonateUser;
  const tokenFile = user.authProvider?.config?.['tokenFile'];
  if (typeof tokenFile === 'string') headers['Authorization'] = `Bearer ${tokenFromFile(state, tokenFile)}`;
  if (user.exec || isExecProvider(user)) await applyExec(state, user, { opts, headers });
  // An inline token wins over a plugin's.
  if (user.token) headers['Authorization'] = `Bearer ${user.token}`;
  opts.headers = { ...(opts.headers as Record<string, string> | undefined), ...headers };
  if (user.username) opts.auth = `${user.username}:${user.password ?? ''}`;
}

/** client-node's KubeConfig over the same entries, loaded once per kubeconfig. */
function delegateFor(kc: CredentialSource): Promise<ClientNodeConfig> {
  kc.state.delegate ??= import('@kubernetes/client-node').then(({ KubeConfig: Delegate }) => {
    const delegate = new Delegate();
    delegate.loadFromOptions({
      clusters: kc.clusters,
      users: kc.users,
      contexts: kc.contexts,
      currentContext: kc.currentContext ?? '',
    } as Parameters<ClientNodeConfig['loadFromOptions']>[0]);
    return delegate;
  });
  return kc.state.delegate;
}

/** Applies the current context's credentials to a request's options. */
export async function applyCredentials(kc: CredentialSource, opts: https.RequestOptions): Promise<void> {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (needsClientNode(cluster, user)) {
    await (await delegateFor(kc)).applyToHTTPSOptions(opts);
    return;
  }
  if (cluster?.server.startsWith('http:') && !cluster.skipTLSVerify)
    throw new Error(
      `server ${cluster.server} is plain HTTP: set insecure-skip-tls-verify: true on its cluster to allow it`,
    );
  applyTls(cluster, user, opts);
  if (user) await applyUser(kc.state, user, opts);
}
