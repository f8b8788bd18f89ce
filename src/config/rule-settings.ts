/**
 * The flags every command that runs the rules shares (serve, review, check, audit),
 * their validation, and the engine context built from them. A new rule flag
 * is declared in RULE_FLAGS, validated in ruleSettingsFrom and carried into
 * RuleContext by ruleContext: the four commands then take it alike.
 */
import { ServiceRanges } from '../rules/index.js';
import { DOMAIN_PREFIXED, isDns1123Subdomain, ROUTABILITY_MAX_LENGTH } from '../rules/index.js';
import type {
  AllocatedIPs,
  GepRevision,
  GepRevisionSetting,
  Enforcement,
  RuleContext,
} from '../rules/index.js';
import type { FlagDefinitions, FlagValues, Parsed } from './flags.js';

export const RULE_FLAGS = {
  'service-cidr': {
    kind: 'list',
    description:
      'Service CIDR(s); repeat or comma-separate for dual-stack. For serve, given CIDRs replace the ServiceCIDR watch.',
  },
  'cluster-domain': { kind: 'string', default: 'cluster.local', description: 'Cluster DNS domain.' },
  'gep-revision': {
    kind: 'string',
    default: 'auto',
    choices: ['auto', 'provisional', 'experimental'],
    description:
      "GEP-5093 revision: provisional, experimental, or auto (the cluster's Gateway CRD; provisional without a cluster).",
  },
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

/** What the engine is configured with, as the flags gave it. */
export interface RuleSettings {
  /** --service-cidr as written (for reports); `serviceRanges` holds them parsed. */
  readonly serviceCidrs: readonly string[];
  readonly clusterDomain: string;
  readonly specPolicy: Enforcement;
  readonly statusPolicy: Enforcement;
  readonly allowedRoutability: ReadonlySet<string> | undefined;
  /** --gep-revision as given: `auto` is resolved by whoever knows whether there is a cluster. */
  readonly gepRevision: GepRevisionSetting;
}

/** Rule settings with --service-cidr parsed once, at start-up: undefined when the flag is absent. */
export interface RuleConfig extends RuleSettings {
  readonly serviceRanges: ServiceRanges | undefined;
}

function allowedRoutabilityError(allowed: readonly string[]): string | undefined {
  for (const value of allowed) {
    if (value.length > ROUTABILITY_MAX_LENGTH || !DOMAIN_PREFIXED.test(value))
      return `--allowed-routability: "${value}" is not a domain-prefixed routability (e.g. example.com/CorpWan)`;
  }
  return undefined;
}

/** Validates the shared rule flags; the CIDRs are parsed here so a bad one stops start-up. */
export function ruleSettingsFrom(flags: FlagValues<typeof RULE_FLAGS>): Parsed<RuleConfig> {
  const serviceCidrs = flags['service-cidr'] ?? [];
  let serviceRanges: ServiceRanges | undefined;
  if (serviceCidrs.length > 0) {
    const parsed = ServiceRanges.parse(serviceCidrs);
    if (!parsed.ok) return { ok: false, error: `--service-cidr: ${parsed.error}` };
    serviceRanges = parsed.ranges;
  }
  const clusterDomain = flags['cluster-domain'].replace(/\.$/, '');
  if (!isDns1123Subdomain(clusterDomain))
    return {
      ok: false,
      error: `--cluster-domain: "${clusterDomain}" is not a DNS domain (e.g. cluster.local)`,
    };
  const allowed = flags['allowed-routability'];
  const badAllowed = allowedRoutabilityError(allowed ?? []);
  if (badAllowed !== undefined) return { ok: false, error: badAllowed };
  return {
    ok: true,
    value: Object.freeze({
      serviceCidrs,
      serviceRanges,
      clusterDomain,
      specPolicy: flags['spec-policy'],
      statusPolicy: flags['status-policy'],
      allowedRoutability: allowed && allowed.length > 0 ? new Set(allowed) : undefined,
      gepRevision: flags['gep-revision'],
    }),
  };
}

/** The revision without a cluster: the flag's, or provisional for auto (docs/gep-revisions.md). */
export function offlineRevision(setting: GepRevisionSetting): GepRevision {
  return setting === 'auto' ? 'provisional' : setting;
}

/**
 * Builds the engine's context from settings and the live inputs. `revision`
 * is the one in force (serve: the revision source; check --from-cluster: the
 * CRD read); without it, the offline reading of --gep-revision.
 */
export function ruleContext(
  settings: RuleSettings,
  ranges: ServiceRanges,
  allocatedIPs?: AllocatedIPs,
  revision: GepRevision = offlineRevision(settings.gepRevision),
): RuleContext & { readonly revision: GepRevision } {
  return {
    revision,
    ranges,
    clusterDomain: settings.clusterDomain,
    allowedRoutability: settings.allowedRoutability,
    specPolicy: settings.specPolicy,
    statusPolicy: settings.statusPolicy,
    allocatedIPs,
  };
}
