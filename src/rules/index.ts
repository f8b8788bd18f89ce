/**
 * The rule engine: pure functions from a Gateway admission request and a
 * context to a decision. `serve`, `review` and `check` all call these, so a
 * pipeline and the cluster can never disagree.
 */
import { readAddresses, entryKey, type AddressEntry } from './routability.js';
import { checkSpecAddress, SPEC_ADDRESSES } from './spec.js';
import {
  checkAddressesAssigned,
  checkStatusAddress,
  conditionKey,
  indexSpecRequests,
  STATUS_ADDRESSES,
} from './status.js';
import { clampWarning } from './messages.js';
import {
  asRecord,
  finding,
  own,
  type Finding,
  type GatewayRequest,
  type Policy,
  type RuleContext,
} from './types.js';

export interface ValidationResult {
  readonly allowed: boolean;
  /** Findings that deny the request (enforce policy). */
  readonly violations: readonly Finding[];
  /** Findings reported as warnings because their policy is `warn`. */
  readonly warned: readonly Finding[];
  /** Findings on unchanged entries, allowed by ratcheting. */
  readonly ratcheted: readonly Finding[];
  /** Warning-only findings (never deny). */
  readonly notices: readonly Finding[];
  /** The aggregated denial message, Kubernetes style; empty when allowed. */
  readonly message: string;
  /** Admission warnings, each ≤ 120 characters, within the apiserver's total budget. */
  readonly warnings: readonly string[];
  readonly auditAnnotations: Readonly<Record<string, string>>;
}

/** Which list a finding belongs to, and so which policy decides it. */
type Scope = 'spec' | 'status';

interface Collected {
  scope: Scope;
  finding: Finding;
  ratcheted: boolean;
}

function gatewayIdentity(request: GatewayRequest): { namespace: string; name: string } {
  const metadata = asRecord(own(asRecord(request.object), 'metadata'));
  const namespace = own(metadata, 'namespace');
  const name = own(metadata, 'name');
  return {
    namespace: typeof namespace === 'string' ? namespace : (request.namespace ?? ''),
    name: typeof name === 'string' ? name : (request.name ?? ''),
  };
}

function unchangedKeys(old: readonly AddressEntry[]): Set<string> {
  return new Set(old.map(entryKey));
}

function collectSpec(request: GatewayRequest, ctx: RuleContext, out: Collected[]): void {
  const spec = asRecord(own(asRecord(request.object), 'spec'));
  const { entries, findings } = readAddresses(own(spec, 'addresses'), SPEC_ADDRESSES);
  for (const f of findings) out.push({ scope: 'spec', finding: f, ratcheted: false });
  const old =
    request.operation === 'UPDATE'
      ? unchangedKeys(
          readAddresses(own(asRecord(own(asRecord(request.oldObject), 'spec')), 'addresses'), SPEC_ADDRESSES)
            .entries,
        )
      : new Set<string>();
  const gateway = gatewayIdentity(request);
  for (const entry of entries) {
    const ratcheted = old.has(entryKey(entry));
    for (const f of checkSpecAddress(entry, ctx, gateway)) out.push({ scope: 'spec', finding: f, ratcheted });
  }
}

function collectStatus(request: GatewayRequest, ctx: RuleContext, out: Collected[]): void {
  const object = asRecord(request.object);
  const status = asRecord(own(object, 'status'));
  const oldStatus = asRecord(own(asRecord(request.oldObject), 'status'));
  const spec = readAddresses(own(asRecord(own(object, 'spec')), 'addresses'), SPEC_ADDRESSES).entries;
  const requests = indexSpecRequests(spec);
  const { entries, findings } = readAddresses(own(status, 'addresses'), STATUS_ADDRESSES);
  for (const f of findings) out.push({ scope: 'status', finding: f, ratcheted: false });
  const old = unchangedKeys(readAddresses(own(oldStatus, 'addresses'), STATUS_ADDRESSES).entries);
  for (const entry of entries) {
    const ratcheted = old.has(entryKey(entry));
    for (const f of checkStatusAddress(entry, ctx, requests))
      out.push({ scope: 'status', finding: f, ratcheted });
  }
  const conditionsUnchanged = oldStatus !== undefined && conditionKey(status) === conditionKey(oldStatus);
  for (const f of checkAddressesAssigned(status))
    out.push({ scope: 'status', finding: f, ratcheted: conditionsUnchanged });
}

/** Total warning budget: the apiserver drops warnings past 4096 characters in all. */
const WARNINGS_TOTAL_MAX = 4000;

function budgetWarnings(lines: string[]): string[] {
  const kept: string[] = [];
  let total = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (total + line.length > WARNINGS_TOTAL_MAX - 60) {
      kept.push(`${lines.length - i} more warnings not shown`);
      break;
    }
    kept.push(line);
    total += line.length;
  }
  return kept;
}

/**
 * How many violations a message and its causes carry at most. A real Gateway has
 * at most 16 addresses per list; a hostile object with thousands must not turn
 * into a multi-megabyte answer.
 */
export const MAX_REPORTED_VIOLATIONS = 32;

/** Kubernetes' aggregate rendering: one error as is, several as `[a, b]`. */
export function aggregateMessage(findings: readonly Finding[]): string {
  if (findings.length === 0) return '';
  if (findings.length === 1) return findings[0]!.message;
  const shown = findings.slice(0, MAX_REPORTED_VIOLATIONS).map((f) => f.message);
  if (findings.length > MAX_REPORTED_VIOLATIONS)
    shown.push(`and ${findings.length - MAX_REPORTED_VIOLATIONS} more`);
  return `[${shown.join(', ')}]`;
}

function summarise(findings: readonly Finding[]): string {
  const shown = findings.slice(0, MAX_REPORTED_VIOLATIONS).map((f) => `${f.code}@${f.field.toString()}`);
  if (findings.length > MAX_REPORTED_VIOLATIONS)
    shown.push(`and ${findings.length - MAX_REPORTED_VIOLATIONS} more`);
  return shown.join(', ');
}

/** Validates a Gateway CREATE/UPDATE (spec rules) or a gateways/status UPDATE (status rules). */
export function validateGateway(request: GatewayRequest, ctx: RuleContext): ValidationResult {
  const collected: Collected[] = [];
  const op = request.operation;
  const sub = request.subResource ?? '';
  if ((op === 'CREATE' || op === 'UPDATE') && sub === '') collectSpec(request, ctx, collected);
  else if (op === 'UPDATE' && sub === 'status') collectStatus(request, ctx, collected);
  return decide(collected, ctx);
}

function decide(collected: readonly Collected[], ctx: RuleContext): ValidationResult {
  const policy = (scope: Scope): Policy => (scope === 'spec' ? ctx.specPolicy : ctx.statusPolicy);
  const violations: Finding[] = [];
  const warned: Finding[] = [];
  const notices: Finding[] = [];
  const ratchetedByEntry = new Map<string, Finding[]>();
  const warnings: string[] = [];

  for (const { scope, finding: f, ratcheted } of collected) {
    if (ratcheted) {
      // Unchanged entries are not re-checked: a failing rule only warns, and notices are not repeated.
      if (f.severity === 'violation') {
        const entry = entryFieldOf(f);
        const list = ratchetedByEntry.get(entry) ?? [];
        list.push(f);
        ratchetedByEntry.set(entry, list);
      }
      continue;
    }
    if (f.severity === 'warning') {
      notices.push(f);
      warnings.push(f.warning);
    } else if (policy(scope) === 'enforce') {
      // The denial message carries it in full; repeating it as a warning would only add noise.
      violations.push(f);
    } else {
      warned.push(f);
      warnings.push(f.warning);
    }
  }
  const ratcheted: Finding[] = [];
  for (const list of ratchetedByEntry.values()) {
    ratcheted.push(...list);
    const first = list[0]!;
    const note = finding('UnchangedEntryRatcheted', first.field.upToFirstIndex(), {
      codes: [...new Set(list.map((f) => f.code))],
    });
    warnings.push(note.warning);
  }

  const auditAnnotations: Record<string, string> = {};
  if (violations.length > 0) auditAnnotations['denied'] = summarise(violations);
  if (warned.length > 0) auditAnnotations['warned'] = summarise(warned);
  if (ratcheted.length > 0) auditAnnotations['ratcheted'] = summarise(ratcheted);

  return {
    allowed: violations.length === 0,
    violations,
    warned,
    ratcheted,
    notices,
    message: aggregateMessage(violations),
    warnings: budgetWarnings(warnings.map(clampWarning)),
    auditAnnotations,
  };
}

function entryFieldOf(f: Finding): string {
  return f.field.upToFirstIndex().toString();
}

export { mutateGateway, type JsonPatchOperation, type MutationResult } from './defaults.js';
export { FieldPath } from './field-path.js';
export { ServiceRanges, parseCidr, type ServiceRange, type ServiceCidrInput } from './networks.js';
export { CATALOGUE, RULE_CODES, type RuleCode } from './messages.js';
export { ROUTABILITY_PATTERN, ROUTABILITY_MAX_LENGTH } from './routability.js';
export { GEP_REVISIONS, type GepRevision, type GepRevisionSetting } from './revision.js';
export type { Finding, GatewayRequest, RuleContext, Policy, AllocatedIPs, IPAddressHolder } from './types.js';
