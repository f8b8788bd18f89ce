/**
 * The shapes the admission model works on: a write to a Gateway as the API
 * server receives it, the webhook backends it can reach, and its verdict.
 */

/** A JSON object (a Kubernetes object, a manifest, a patch target). */
export type Obj = Record<string, unknown>;

export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
}

/** One write to gateways.gateway.networking.k8s.io, as a client sends it. */
export interface Write {
  readonly operation: 'CREATE' | 'UPDATE';
  /** '' (the main resource) or 'status'. */
  readonly subResource?: '' | 'status';
  /** The version the client wrote (the request's resource version); v1 unless said. */
  readonly version?: 'v1' | 'v1beta1';
  readonly namespace: string;
  readonly name: string;
  readonly object: Obj;
  /** The stored object, for UPDATE. */
  readonly oldObject?: Obj;
  readonly dryRun?: boolean;
  readonly userInfo?: UserInfo;
}

/**
 * What answers at a webhook Service: the built server on a loopback port,
 * nothing (no ready endpoint), a port nobody listens on (connection refused),
 * or a host that drops every packet (unreachable: the call times out).
 */
export type Backend =
  | { readonly kind: 'serving'; readonly port: number }
  | { readonly kind: 'no-endpoints' }
  | { readonly kind: 'refused'; readonly port: number }
  | { readonly kind: 'unreachable'; readonly port: number };

/** The API server's status error for a refused write. */
export interface Refusal {
  readonly code: number;
  readonly reason: string;
  readonly message: string;
  /** Which admission step refused: a plugin, webhook or policy name. */
  readonly by: string;
}

export interface Verdict {
  readonly allowed: boolean;
  readonly refusal?: Refusal;
  readonly warnings: readonly string[];
  readonly auditAnnotations: Readonly<Record<string, string>>;
  /** The object as it would be stored (after mutation and pruning). */
  readonly object: Obj;
  /** One line per step the model took (which hook was called or skipped, and why). */
  readonly trace: readonly string[];
}

/** Collects warnings, audit annotations and trace lines while one write is admitted. */
export class Recorder {
  readonly warnings: string[] = [];
  readonly auditAnnotations: Record<string, string> = {};
  readonly trace: string[] = [];
  note(line: string): void {
    this.trace.push(line);
  }
}

/** A refusal as a thrown value inside the model (caught once, in api-server.ts). */
export class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
  }
}

export function refuse(by: string, code: number, reason: string, message: string): never {
  throw new Refused({ by, code, reason, message });
}

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
