/**
 * The validating side of the engine: runs the spec or the status rules over a
 * reviewed Gateway and decides, per policy and ratcheting, what denies, what
 * warns and what is only noted.
 */
import type { AddressEntry, AddressList } from './gateway.js';
import { isSpecWrite, isStatusWrite, type GatewayReview } from './review.js';
import { entryKey } from './routability.js';
import { checkSpecAddress } from './spec.js';
import { checkAddressesAssigned, checkStatusAddress, conditionKey, indexSpecRequests } from './status.js';
import { finding, type Finding, type Enforcement, type RuleContext } from './types.js';
import { budgetWarnings } from './warnings.js';

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

/**
 * Whether an entry was already in the old list (ratcheting). The keys of the
 * old list are built on the first question: an entry without findings never
 * asks, and keys canonicalise IPs, which costs a parse per entry.
 */
function unchangedEntries(
  old: readonly AddressEntry[],
  ctx: RuleContext,
  status: boolean,
): (entry: AddressEntry) => boolean {
  if (old.length === 0) return () => false;
  let keys: Set<string> | undefined;
  return (entry) => {
    if (!keys) {
      keys = new Set<string>();
      for (const o of old) keys.add(entryKey(o, ctx, status));
    }
    return keys.has(entryKey(entry, ctx, status));
  };
}

/** Where collectList appends: the scope its findings are reported under, and the list. */
interface Sink {
  readonly scope: Scope;
  readonly out: Collected[];
}

function collectList(
  list: AddressList,
  unchanged: (entry: AddressEntry) => boolean,
  check: (entry: AddressEntry) => Finding[],
  { scope, out }: Sink,
): void {
  for (const f of list.findings) out.push({ scope, finding: f, ratcheted: false });
  for (const entry of list.entries) {
    const findings = check(entry);
    if (findings.length === 0) continue;
    const ratcheted = unchanged(entry);
    for (const f of findings) out.push({ scope, finding: f, ratcheted });
  }
}

function collectSpec(review: GatewayReview, ctx: RuleContext, out: Collected[]): void {
  const unchanged =
    review.operation === 'UPDATE' ? unchangedEntries(review.old.spec.entries, ctx, false) : () => false;
  const identity = review.identity;
  collectList(review.gateway.spec, unchanged, (entry) => checkSpecAddress(entry, ctx, identity), {
    scope: 'spec',
    out,
  });
}

function collectStatus(review: GatewayReview, ctx: RuleContext, out: Collected[]): void {
  const gateway = review.gateway;
  const requests = indexSpecRequests(gateway.spec.entries, ctx);
  const unchanged = unchangedEntries(review.old.status.entries, ctx, true);
  collectList(gateway.status, unchanged, (entry) => checkStatusAddress(entry, ctx, requests), {
    scope: 'status',
    out,
  });
  const conditionsUnchanged = review.old.hasStatus && conditionKey(gateway) === conditionKey(review.old);
  for (const f of checkAddressesAssigned(gateway, ctx, requests))
    out.push({ scope: 'status', finding: f, ratcheted: conditionsUnchanged });
}

/** A finding's warning without its leading `<field>: `, to quote it inside another warning. */
function withoutField(f: Finding): string {
  const prefix = `${f.field.toString()}: `;
  return f.warning.startsWith(prefix) ? f.warning.slice(prefix.length) : f.warning;
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
export function validateGatewayReview(review: GatewayReview, ctx: RuleContext): ValidationResult {
  const collected: Collected[] = [];
  if (isSpecWrite(review)) collectSpec(review, ctx, collected);
  else if (isStatusWrite(review)) collectStatus(review, ctx, collected);
  return decide(collected, ctx);
}

function decide(collected: readonly Collected[], ctx: RuleContext): ValidationResult {
  const policy = (scope: Scope): Enforcement => (scope === 'spec' ? ctx.specPolicy : ctx.statusPolicy);
  const violations: Finding[] = [];
  const warned: Finding[] = [];
  const notices: Finding[] = [];
  const ratchetedByEntry = new Map<string, Finding[]>();
  const warnings: string[] = [];

  for (const { scope, finding: f, ratcheted } of collected) {
    if (ratcheted) {
      // Unchanged entries are not re-checked: a failing rule only warns, and notices are not repeated.
      if (f.severity !== 'warning') {
        const entry = f.field.upToFirstIndex().toString();
        const list = ratchetedByEntry.get(entry) ?? [];
        list.push(f);
        ratchetedByEntry.set(entry, list);
      }
      continue;
    }
    if (f.severity === 'warning') {
      notices.push(f);
      warnings.push(f.warning);
    } else if (f.severity === 'invalid' || policy(scope) === 'enforce') {
      // Invalid data (the CRD refuses it too) is denied under every policy.
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
      problem: withoutField(first),
      more: list.length - 1,
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
    warnings: budgetWarnings(warnings),
    auditAnnotations,
  };
}
