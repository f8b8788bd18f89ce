/**
 * The only reader of argv and the environment. Every command declares its
 * flags here; each flag `--some-flag` also reads `ROUTABILITY_WEBHOOK_SOME_FLAG`
 * (command line wins). The result is a typed, frozen config, or a one-line error.
 */
import { parseArgs } from 'node:util';
import { ServiceRanges } from './rules/networks.js';
import type { Policy, RuleContext, AllocatedIPs } from './rules/types.js';
import { ROUTABILITY_MAX_LENGTH } from './rules/routability.js';

export type FlagKind = 'string' | 'list' | 'boolean' | 'port' | 'integer';

export interface FlagDefinition {
  readonly kind: FlagKind;
  readonly short?: string;
  readonly default?: string | boolean | readonly string[] | number;
  readonly choices?: readonly string[];
  readonly description: string;
  /** Not read from the environment (e.g. -f inputs, --help). */
  readonly noEnv?: boolean;
}

export type FlagDefinitions = Readonly<Record<string, FlagDefinition>>;
export type FlagValue = string | boolean | number | readonly string[] | undefined;
export type ParsedFlags = Readonly<Record<string, FlagValue>>;

export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

export const ENV_PREFIX = 'ROUTABILITY_WEBHOOK_';

export function envName(flag: string): string {
  return ENV_PREFIX + flag.toUpperCase().replaceAll('-', '_');
}

/** Splits repeated and comma-separated values: `--x a,b --x c` → [a, b, c]. */
function splitList(values: readonly string[]): string[] {
  return values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function convert(
  name: string,
  def: FlagDefinition,
  raw: string | boolean | string[],
  from: string,
): Parsed<FlagValue> {
  switch (def.kind) {
    case 'boolean': {
      if (typeof raw === 'boolean') return { ok: true, value: raw };
      const text = String(raw).toLowerCase();
      if (['true', '1', 'yes'].includes(text)) return { ok: true, value: true };
      if (['false', '0', 'no'].includes(text)) return { ok: true, value: false };
      return { ok: false, error: `${from}: must be true or false, got "${String(raw)}"` };
    }
    case 'list':
      return { ok: true, value: splitList(Array.isArray(raw) ? raw : [String(raw)]) };
    case 'port':
    case 'integer': {
      const text = String(raw);
      const n = Number(text);
      const max = def.kind === 'port' ? 65535 : Number.MAX_SAFE_INTEGER;
      // Port 0 asks the kernel for a free port (tests); the bound port is logged.
      if (!/^\d+$/.test(text) || n > max)
        return {
          ok: false,
          error: `${from}: must be ${def.kind === 'port' ? 'a port from 0 to 65535' : 'a whole number'}, got "${text}"`,
        };
      return { ok: true, value: n };
    }
    case 'string': {
      const text = String(raw);
      if (def.choices && !def.choices.includes(text))
        return { ok: false, error: `${from}: must be one of ${def.choices.join(', ')}, got "${text}"` };
      return { ok: true, value: text };
    }
  }
  return { ok: false, error: `${name}: unknown flag kind` };
}

/** Parses argv (strict: unknown flags are errors) with environment fallbacks. */
export function parseFlags(
  defs: FlagDefinitions,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  opts: { positionals?: boolean } = {},
): Parsed<{ flags: ParsedFlags; positionals: readonly string[] }> {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {};
  for (const [name, def] of Object.entries(defs)) {
    options[name] = {
      type: def.kind === 'boolean' ? 'boolean' : 'string',
      ...(def.kind === 'list' ? { multiple: true } : {}),
      ...(def.short ? { short: def.short } : {}),
    };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options,
      strict: true,
      allowPositionals: opts.positionals ?? false,
      allowNegative: true,
    });
  } catch (err) {
    return { ok: false, error: (err as Error).message.split('\n')[0] ?? 'invalid arguments' };
  }
  const flags: Record<string, FlagValue> = {};
  for (const [name, def] of Object.entries(defs)) {
    const fromArgv = (parsed.values as Record<string, string | boolean | string[] | undefined>)[name];
    const envValue = def.noEnv ? undefined : env[envName(name)];
    let value: FlagValue = def.default as FlagValue;
    if (fromArgv !== undefined) {
      const r = convert(name, def, fromArgv, `--${name}`);
      if (!r.ok) return r;
      value = r.value;
    } else if (envValue !== undefined && envValue !== '') {
      const r = convert(name, def, envValue, envName(name));
      if (!r.ok) return r;
      value = r.value;
    }
    flags[name] = value;
  }
  return { ok: true, value: { flags: Object.freeze(flags), positionals: parsed.positionals } };
}

/** The flags every command that runs the rules shares: serve, review, check. */
export const RULE_FLAGS = {
  'service-cidr': {
    kind: 'list',
    description:
      'Service CIDR(s); repeat or comma-separate for dual-stack. For serve, given CIDRs replace the ServiceCIDR watch.',
  },
  'cluster-domain': { kind: 'string', default: 'cluster.local', description: 'Cluster DNS domain.' },
  'spec-policy': {
    kind: 'string',
    default: 'enforce',
    choices: ['enforce', 'warn'],
    description: 'enforce: deny spec violations; warn: allow with warnings.',
  },
  'status-policy': {
    kind: 'string',
    default: 'warn',
    choices: ['enforce', 'warn'],
    description: 'enforce: deny dishonest status writes; warn: allow with warnings and audit annotations.',
  },
  'allowed-routability': {
    kind: 'list',
    description: 'Domain-prefixed routability values allowed in spec (default: any well-formed one).',
  },
} as const satisfies FlagDefinitions;

export interface RuleSettings {
  readonly serviceCidrs: readonly string[];
  readonly clusterDomain: string;
  readonly specPolicy: Policy;
  readonly statusPolicy: Policy;
  readonly allowedRoutability: ReadonlySet<string> | undefined;
}

const DOMAIN_PREFIXED =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Validates the shared rule flags; the CIDRs are parsed here so a bad one stops start-up. */
export function ruleSettingsFrom(flags: ParsedFlags): Parsed<RuleSettings> {
  const serviceCidrs = (flags['service-cidr'] as readonly string[] | undefined) ?? [];
  const parsed = ServiceRanges.parse(serviceCidrs);
  if (!parsed.ok) return { ok: false, error: `--service-cidr: ${parsed.error}` };
  const clusterDomain = String(flags['cluster-domain']).replace(/\.$/, '');
  if (!DNS_SUBDOMAIN.test(clusterDomain))
    return {
      ok: false,
      error: `--cluster-domain: "${clusterDomain}" is not a DNS domain (e.g. cluster.local)`,
    };
  const allowed = flags['allowed-routability'] as readonly string[] | undefined;
  for (const value of allowed ?? []) {
    if (value.length > ROUTABILITY_MAX_LENGTH || !DOMAIN_PREFIXED.test(value))
      return {
        ok: false,
        error: `--allowed-routability: "${value}" is not a domain-prefixed routability (e.g. example.com/CorpWan)`,
      };
  }
  return {
    ok: true,
    value: Object.freeze({
      serviceCidrs,
      clusterDomain,
      specPolicy: flags['spec-policy'] as Policy,
      statusPolicy: flags['status-policy'] as Policy,
      allowedRoutability: allowed && allowed.length > 0 ? new Set(allowed) : undefined,
    }),
  };
}

/** Builds the engine's context from settings and the live inputs. */
export function ruleContext(
  settings: RuleSettings,
  ranges: ServiceRanges,
  allocatedIPs?: AllocatedIPs,
): RuleContext {
  return {
    ranges,
    clusterDomain: settings.clusterDomain,
    allowedRoutability: settings.allowedRoutability,
    specPolicy: settings.specPolicy,
    statusPolicy: settings.statusPolicy,
    allocatedIPs,
  };
}

/** kubeadm's default service range, used only by `serve --dev` with no other source. */
export const DEV_SERVICE_CIDR = '10.96.0.0/12';

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
  'check-allocated-ips': {
    kind: 'boolean',
    description:
      'Deny Cluster requests for IPs held by other IPAddress objects (default: on when the cluster is used).',
  },
  kubeconfig: {
    kind: 'string',
    description: 'Kubeconfig file (default: in-cluster, then KUBECONFIG, then ~/.kube/config).',
  },
  'log-level': {
    kind: 'string',
    default: 'info',
    choices: ['trace', 'debug', 'info', 'warn', 'error', 'fatal'],
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
  'cert-dir': {
    kind: 'string',
    default: 'certs',
    description: 'With --dev: where dev certificates are kept.',
  },
  dev: {
    kind: 'boolean',
    default: false,
    description: 'Development: generate certificates into --cert-dir, embedded default range, readable logs.',
  },
} as const satisfies FlagDefinitions;

export interface ServeConfig extends RuleSettings {
  readonly port: number;
  readonly healthPort: number;
  readonly tlsCertFile: string | undefined;
  readonly tlsPrivateKeyFile: string | undefined;
  readonly clientCaFile: string | undefined;
  readonly checkAllocatedIps: boolean | undefined;
  readonly kubeconfig: string | undefined;
  readonly logLevel: string;
  readonly shutdownTimeoutSeconds: number;
  readonly maxBodyBytes: number;
  readonly certDir: string;
  readonly dev: boolean;
}

export function parseServeConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Parsed<ServeConfig> {
  const parsed = parseFlags(SERVE_FLAGS, argv, env);
  if (!parsed.ok) return parsed;
  const f = parsed.value.flags;
  const rules = ruleSettingsFrom(f);
  if (!rules.ok) return rules;
  const cert = f['tls-cert-file'] as string | undefined;
  const key = f['tls-private-key-file'] as string | undefined;
  const dev = f['dev'] === true;
  if ((cert === undefined) !== (key === undefined))
    return { ok: false, error: '--tls-cert-file and --tls-private-key-file must be given together' };
  if (cert === undefined && !dev)
    return {
      ok: false,
      error:
        '--tls-cert-file and --tls-private-key-file are required (or use --dev for generated certificates)',
    };
  if (f['port'] === f['health-port'] && f['port'] !== 0)
    return { ok: false, error: '--port and --health-port must differ' };
  return {
    ok: true,
    value: Object.freeze({
      ...rules.value,
      port: f['port'] as number,
      healthPort: f['health-port'] as number,
      tlsCertFile: cert,
      tlsPrivateKeyFile: key,
      clientCaFile: f['client-ca-file'] as string | undefined,
      checkAllocatedIps: f['check-allocated-ips'] as boolean | undefined,
      kubeconfig: f['kubeconfig'] as string | undefined,
      logLevel: f['log-level'] as string,
      shutdownTimeoutSeconds: f['shutdown-timeout-seconds'] as number,
      maxBodyBytes: f['max-body-bytes'] as number,
      certDir: f['cert-dir'] as string,
      dev,
    }),
  };
}

export const CERTS_FLAGS = {
  'out-dir': {
    kind: 'string',
    default: 'certs',
    description: 'Folder to write ca.crt, ca.key, tls.crt and tls.key into.',
  },
  service: {
    kind: 'string',
    default: 'gateway-routability-webhook',
    description: 'Service name the apiserver calls.',
  },
  namespace: { kind: 'string', default: 'default', description: 'Namespace of that Service.' },
  'cluster-domain': {
    kind: 'string',
    default: 'cluster.local',
    description: 'Cluster DNS domain for the long SAN.',
  },
  'extra-san': { kind: 'list', description: 'More DNS names or IPs to include.' },
  days: { kind: 'integer', default: 365, description: 'Validity in days.' },
  force: { kind: 'boolean', default: false, description: 'Overwrite existing files.' },
} as const satisfies FlagDefinitions;

export const REVIEW_FLAGS = {
  ...RULE_FLAGS,
  webhook: {
    kind: 'string',
    default: 'validate',
    choices: ['validate', 'mutate'],
    description: 'Which webhook answers: validate (POST /validate) or mutate (POST /mutate).',
  },
} as const satisfies FlagDefinitions;

/** `--help` text for a command, from its flag definitions. */
export function helpText(command: string, summary: string, defs: FlagDefinitions): string {
  const lines = [`Usage: routability-webhook ${command} [flags]`, '', summary, '', 'Flags:'];
  for (const [name, def] of Object.entries(defs)) {
    const flag = `${def.short ? `-${def.short}, ` : ''}--${name}${def.kind === 'boolean' ? '' : ' VALUE'}`;
    const dflt =
      def.default === undefined || def.default === false ? '' : ` (default: ${String(def.default)})`;
    const env = def.noEnv ? '' : ` [${envName(name)}]`;
    lines.push(`  ${flag.padEnd(34)} ${def.description}${dflt}${env}`);
  }
  return lines.join('\n');
}
