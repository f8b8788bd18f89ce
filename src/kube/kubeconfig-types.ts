/**
 * The entries of a kubeconfig as kubeconfig-model.ts holds them, in
 * @kubernetes/client-node's shapes (camelCase), so that the credentials only
 * that client applies can be handed to it unchanged.
 */
export interface Cluster {
  readonly name: string;
  readonly server: string;
  readonly caData?: string | undefined;
  caFile?: string | undefined;
  readonly skipTLSVerify: boolean;
  readonly tlsServerName?: string | undefined;
  readonly proxyUrl?: string | undefined;
}

/** An exec credential plugin (`users[].user.exec`). */
export interface ExecConfig {
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: ReadonlyArray<{ readonly name: string; readonly value: string }>;
  readonly apiVersion?: string;
}

export interface AuthProvider {
  readonly name: string;
  readonly config?: Record<string, unknown>;
}

export interface User {
  readonly name: string;
  readonly token?: string | undefined;
  certData?: string | undefined;
  certFile?: string | undefined;
  keyData?: string | undefined;
  keyFile?: string | undefined;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly exec?: ExecConfig | undefined;
  authProvider?: AuthProvider | undefined;
  readonly impersonateUser?: string | undefined;
}

export interface Context {
  readonly name: string;
  readonly cluster: string;
  readonly user?: string | undefined;
  readonly namespace?: string | undefined;
}

export interface KubeConfigOptions {
  readonly clusters: readonly Cluster[];
  readonly users: readonly User[];
  readonly contexts: readonly Context[];
  readonly currentContext: string | undefined;
}
