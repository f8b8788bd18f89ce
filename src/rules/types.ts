import type { FieldPath } from './field-path.js';
import { renderFieldErrorBody, type ErrorType } from './field-error.js';
import {
  CATALOGUE,
  clampWarning,
  type Entry,
  type ParamsOf,
  type RuleCode,
  type Severity,
} from './messages.js';
import type { GepRevision } from './revision.js';
import type { ServiceRanges } from './networks.js';

/** What a violation does: deny the write, or allow it with a warning (`--spec-policy`, `--status-policy`). */
export type Enforcement = 'enforce' | 'warn';

/** Who holds an allocated ClusterIP, from the cluster's IPAddress objects. */
export interface IPAddressHolder {
  readonly group: string;
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
}

/** Looks up the holder of a canonical IP; undefined when nothing holds it. */
export interface AllocatedIPs {
  holderOf(canonicalIP: string): IPAddressHolder | undefined;
  /**
   * Why the holder of this IP could not be learnt (the lookup failed), in a
   * few words; undefined when holderOf's answer is known. The rule then
   * allows the entry with a ClusterAddressAllocationUnchecked warning.
   */
  uncheckedReason?(canonicalIP: string): string | undefined;
}

/** Everything the rules depend on besides the request: no I/O behind any of it. */
export interface RuleContext {
  readonly ranges: ServiceRanges;
  readonly clusterDomain: string;
  /** Domain-prefixed values allowed; undefined allows any well-formed one. */
  readonly allowedRoutability?: ReadonlySet<string> | undefined;
  readonly specPolicy: Enforcement;
  readonly statusPolicy: Enforcement;
  /**
   * The GEP-5093 revision the rules follow; undefined reads as `provisional`
   * (the seed), so callers that predate the revision keep today's behaviour.
   */
  readonly revision?: GepRevision | undefined;
  /** Allocated ClusterIPs; undefined skips ClusterAddressAllocated. */
  readonly allocatedIPs?: AllocatedIPs | undefined;
}

/** The parts of an admission request the rules read, without the envelope. */
export interface GatewayRequest {
  readonly operation: string;
  readonly subResource?: string | undefined;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
  readonly object: unknown;
  readonly oldObject?: unknown;
}

export interface Finding {
  readonly code: RuleCode;
  readonly field: FieldPath;
  /** `invalid`: denied under every policy; `violation`: per policy; `warning`: never denies. */
  readonly severity: Severity;
  /** The Kubernetes field-error type; `details.causes[].reason` of a denial. */
  readonly type: ErrorType;
  /** The field error after `<field>: ` (`Invalid value: "v": detail`), as `field.Error.ErrorBody()`. */
  readonly body: string;
  /** Full Kubernetes field-error sentence: `<field>: <body>`. */
  readonly message: string;
  /** Compact form (≤ 120 characters) for admission warnings. */
  readonly warning: string;
}

export function finding<C extends RuleCode>(code: C, field: FieldPath, params: ParamsOf<C>): Finding {
  const entry = CATALOGUE[code] as Entry<ParamsOf<C>>;
  const path = field.toString();
  const parts = entry.parts(params);
  const body = renderFieldErrorBody(parts);
  return {
    code,
    field,
    severity: entry.severity,
    type: parts.type,
    body,
    message: `${path}: ${body}`,
    warning: clampWarning(entry.warning(path, params)),
  };
}
