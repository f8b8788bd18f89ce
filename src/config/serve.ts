/**
 * `serve`'s flags and the configuration the server is assembled from. A new
 * server flag is one entry in SERVE_FLAGS and one field in ServeConfig, set in
 * serveConfigFrom: its type comes from the declaration.
 */
import type { FlagDefinitions, FlagValues, Parsed } from './flags.js';
import { parseFlags } from './flags.js';
import { RULE_FLAGS, ruleSettingsFrom, type RuleConfig } from './rule-settings.js';
import { isDns1123Label, isDns1123Subdomain } from '../rules/index.js';

/** kubeadm's default service range, used only by `serve --dev` with no other source. */
export const DEV_SERVICE_CIDR = '10.96.0.0/12';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `--audit-reports`: the report objects the audit writes (audit/reports.ts builds them). */
export const AUDIT_REPORTS = ['none', 'policyreport', 'openreports'] as const;
export type AuditReportsMode = (typeof AUDIT_REPORTS)[number];

export const SERVE_FLAGS = {
  ...RULE_FLAGS,
  port: { kind: 'port', default: 8443, description: 'HTTPS port for POST /validate and /mutate.' },
  'health-port': {
    kind: 'port',
    default: 8080,
    description: 'Plain-HTTP port for /healthz, /readyz, /metrics.',
  },
  'tls-cert-file': { kind: 'string', description: 'Serving certificate (PEM); reloaded when it changes.' },
  'tls-private-key-file': {
    kind: 'string',
    description: 'Serving private key (PEM); reloaded when it changes.',
  },
  'client-ca-file': {
    kind: 'string',
    description: 'CA bundle; when set, clients must present a certificate it signed.',
  },
  'client-allowed-names': {
    kind: 'list',
    description:
      "With --client-ca-file: the only client certificate names accepted (the subject's CN or a DNS SAN, exact, any case); repeat or comma-separate. Others are disconnected after the handshake.",
  },
  'check-allocated-ips': {
    kind: 'boolean',
    description:
      'Deny Cluster requests for IPs held by other IPAddress objects (default: on when the cluster is used).',
  },
  kubeconfig: {
    kind: 'string',
    description: 'Kubeconfig file (default: KUBECONFIG, then in-cluster, then ~/.kube/config).',
  },
  'log-level': {
    kind: 'string',
    default: 'info',
    choices: LOG_LEVELS,
    description: 'Log level.',
  },
  'shutdown-timeout-seconds': {
    kind: 'integer',
    default: 10,
    description: 'On SIGTERM, how long in-flight requests may take before the process exits.',
  },
  'max-body-bytes': {
    kind: 'integer',
    default: 7 * 1024 * 1024,
    description: 'Largest accepted review body.',
  },
  'max-connections': {
    kind: 'integer',
    default: 1000,
    description:
      'Open connections on the webhook port; at the cap the oldest unfinished handshake or longest-idle connection is closed.',
  },
  'max-inflight-body-bytes': {
    kind: 'integer',
    // One of the largest reviews at a time (two 3 MiB objects); more only multiplies the memory a
    // burst of large bodies holds (docs/dev/reliability.md § Hostile clients). The chart sets the same.
    default: 8 * 1024 * 1024,
    description:
      'Request-body bytes read at once; further requests wait (then get 429), small reviews have their own lane.',
  },
  'cert-dir': {
    kind: 'string',
    default: 'certs',
    description: 'With --dev: where dev certificates are kept.',
  },
  'audit-interval': {
    kind: 'duration',
    default: '5m',
    // Below 10 s a pass could follow a pass back to back on a large cluster; above a day nobody
    // would notice drift.
    min: '10s',
    max: '24h',
    zeroIsOff: true,
    description:
      "How often the cluster's stored Gateways are audited (also soon after the ranges, allocations or revision change): 0 (off) or 10s..24h.",
  },
  'audit-lease': {
    kind: 'string',
    default: 'gateway-routability-webhook-audit',
    description: "Lease (in the pod's namespace) that picks the one replica that audits.",
  },
  'audit-lease-duration': {
    kind: 'duration',
    default: '15s',
    min: '3s',
    max: '5m',
    description:
      'How long the audit Lease holds without a renewal; after that another replica may take it (as leaseDurationSeconds).',
  },
  'audit-lease-retry-period': {
    kind: 'duration',
    default: '5s',
    min: '1s',
    max: '100s',
    description:
      'How often the audit Lease is renewed or tried for; its holder stops auditing once --audit-lease-duration minus this has passed without a renewal. At most a third of the duration.',
  },
  'audit-reports': {
    kind: 'string',
    default: 'none',
    choices: AUDIT_REPORTS,
    description:
      'Also write the findings as one report per namespace: none, policyreport (wgpolicyk8s.io/v1alpha2) or openreports (openreports.io/v1alpha1).',
  },
  'policy-params': {
    kind: 'string',
    description:
      "NAMESPACE/NAME of the ValidatingAdmissionPolicy's params ConfigMap to keep equal to the service ranges (the audit leader writes; off by default).",
  },
  dev: {
    kind: 'boolean',
    default: false,
    description: 'Development: generate certificates into --cert-dir, embedded default range, readable logs.',
  },
} as const satisfies FlagDefinitions;

export interface ServeConfig extends RuleConfig {
  readonly port: number;
  readonly healthPort: number;
  readonly tlsCertFile: string | undefined;
  readonly tlsPrivateKeyFile: string | undefined;
  readonly clientCaFile: string | undefined;
  /** --client-allowed-names, lower-cased; empty: any certificate the client CA signed. */
  readonly clientAllowedNames: readonly string[];
  readonly checkAllocatedIps: boolean | undefined;
  readonly kubeconfig: string | undefined;
  readonly logLevel: LogLevel;
  readonly shutdownTimeoutSeconds: number;
  readonly maxBodyBytes: number;
  readonly maxConnections: number;
  readonly maxInflightBodyBytes: number;
  readonly certDir: string;
  readonly dev: boolean;
  /** 0: no background audit. */
  readonly auditIntervalMs: number;
  readonly auditLease: string;
  /** The audit Lease's duration (leaseDurationSeconds, whole seconds) and how often it is renewed or tried for. */
  readonly auditLeaseDurationMs: number;
  readonly auditLeaseRetryPeriodMs: number;
  readonly auditReports: AuditReportsMode;
  /** The policy's params ConfigMap serve keeps in step (--policy-params); undefined: none. */
  readonly policyParams: { readonly namespace: string; readonly name: string } | undefined;
}

/** `NAMESPACE/NAME` of --policy-params. */
function policyParamsFrom(text: string | undefined): Parsed<ServeConfig['policyParams']> {
  if (text === undefined) return { ok: true, value: undefined };
  const [namespace = '', name = '', ...rest] = text.split('/');
  if (rest.length > 0 || !isDns1123Label(namespace) || !isDns1123Subdomain(name))
    return { ok: false, error: `--policy-params: "${text}" is not NAMESPACE/NAME of a ConfigMap` };
  return { ok: true, value: { namespace, name } };
}

/** --client-allowed-names: names to compare, lower-cased; only with --client-ca-file. */
function clientNamesFrom(
  names: readonly string[] | undefined,
  caFile: string | undefined,
): Parsed<readonly string[]> {
  const list = names ?? [];
  if (list.length === 0) return { ok: true, value: [] };
  if (caFile === undefined)
    return {
      ok: false,
      error:
        '--client-allowed-names needs --client-ca-file: without client certificates there is no name to check',
    };
  const bad = list.find((n) => n === '' || /[\s,]/.test(n) || n.length > 253);
  if (bad !== undefined)
    return { ok: false, error: `--client-allowed-names: "${bad}" is not a certificate name` };
  return { ok: true, value: [...new Set(list.map((n) => n.toLowerCase()))] };
}

function tlsFlagsError(cert: string | undefined, key: string | undefined, dev: boolean): string | undefined {
  if ((cert === undefined) !== (key === undefined))
    return '--tls-cert-file and --tls-private-key-file must be given together';
  if (cert === undefined && !dev)
    return '--tls-cert-file and --tls-private-key-file are required (or use --dev for generated certificates)';
  return undefined;
}

/**
 * The holder stops auditing at duration − retry period (its renew deadline);
 * a retry period of at most a third of the duration leaves it two renewals
 * before that, as the defaults (15 s, 5 s) and client-go's checks do.
 */
function leaseTimingError(durationMs: number, retryMs: number): string | undefined {
  if (retryMs * 3 <= durationMs) return undefined;
  return `--audit-lease-retry-period (${retryMs / 1000}s) must be at most a third of --audit-lease-duration (${durationMs / 1000}s): the holder stops auditing when duration minus retry period has passed without a renewal, and needs two tries before that`;
}

/** Validates serve's flag values into its configuration. */
export function serveConfigFrom(f: FlagValues<typeof SERVE_FLAGS>): Parsed<ServeConfig> {
  const rules = ruleSettingsFrom(f);
  if (!rules.ok) return rules;
  const cert = f['tls-cert-file'];
  const key = f['tls-private-key-file'];
  const tlsError = tlsFlagsError(cert, key, f.dev);
  if (tlsError !== undefined) return { ok: false, error: tlsError };
  if (f['max-connections'] < 1) return { ok: false, error: '--max-connections must be at least 1' };
  if (f['max-inflight-body-bytes'] < 1)
    return { ok: false, error: '--max-inflight-body-bytes must be at least 1' };
  if (f.port === f['health-port'] && f.port !== 0)
    return { ok: false, error: '--port and --health-port must differ' };
  if (!isDns1123Subdomain(f['audit-lease']))
    return { ok: false, error: `--audit-lease: "${f['audit-lease']}" is not a Kubernetes object name` };
  const leaseError = leaseTimingError(f['audit-lease-duration'], f['audit-lease-retry-period']);
  if (leaseError !== undefined) return { ok: false, error: leaseError };
  const policyParams = policyParamsFrom(f['policy-params']);
  if (!policyParams.ok) return policyParams;
  const clientNames = clientNamesFrom(f['client-allowed-names'], f['client-ca-file']);
  if (!clientNames.ok) return clientNames;
  return {
    ok: true,
    value: Object.freeze({
      ...rules.value,
      port: f.port,
      healthPort: f['health-port'],
      tlsCertFile: cert,
      tlsPrivateKeyFile: key,
      clientCaFile: f['client-ca-file'],
      clientAllowedNames: clientNames.value,
      checkAllocatedIps: f['check-allocated-ips'],
      kubeconfig: f.kubeconfig,
      logLevel: f['log-level'],
      shutdownTimeoutSeconds: f['shutdown-timeout-seconds'],
      maxBodyBytes: f['max-body-bytes'],
      maxConnections: f['max-connections'],
      maxInflightBodyBytes: f['max-inflight-body-bytes'],
      certDir: f['cert-dir'],
      dev: f.dev,
      auditIntervalMs: f['audit-interval'],
      auditLease: f['audit-lease'],
      auditLeaseDurationMs: f['audit-lease-duration'],
      auditLeaseRetryPeriodMs: f['audit-lease-retry-period'],
      auditReports: f['audit-reports'],
      policyParams: policyParams.value,
    }),
  };
}

export function parseServeConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Parsed<ServeConfig> {
  const parsed = parseFlags(SERVE_FLAGS, argv, env);
  if (!parsed.ok) return parsed;
  return serveConfigFrom(parsed.value.flags);
}
