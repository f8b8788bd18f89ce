/** Rules for status.addresses and the AddressesAssigned condition: is the report honest? */
import type { FieldPath } from './field-path.js';
import {
  findCondition,
  STATUS_CONDITIONS,
  type AddressEntry,
  type ConditionView,
  type GatewayView,
} from './gateway.js';
import { addressIdentity, checkAddressScope, checkRoutabilitySyntax, isWellKnown } from './routability.js';
import { jsonText, plainText } from './json-text.js';
import { finding, type Finding, type RuleContext } from './types.js';

/** What spec requested, indexed once per request for the substitution rule. */
export interface SpecRequests {
  /** identity → the spec entry that requested a routability for that exact value. */
  readonly byValue: ReadonlyMap<string, { field: FieldPath; routability: string }>;
  /** Set when spec has entries and every one names a routability. */
  readonly onlyScopes: ReadonlySet<string> | undefined;
}

export function indexSpecRequests(spec: readonly AddressEntry[]): SpecRequests {
  const byValue = new Map<string, { field: FieldPath; routability: string }>();
  const scopes = new Set<string>();
  let allNamed = spec.length > 0;
  for (const entry of spec) {
    if (typeof entry.routability !== 'string') {
      allNamed = false;
      continue;
    }
    scopes.add(entry.routability);
    const identity = addressIdentity(entry);
    if (identity && !byValue.has(identity))
      byValue.set(identity, { field: entry.field, routability: entry.routability });
  }
  return { byValue, onlyScopes: allNamed ? scopes : undefined };
}

export function checkStatusAddress(entry: AddressEntry, ctx: RuleContext, requests: SpecRequests): Finding[] {
  const unset = entry.routability === undefined;
  const routabilityField = () => entry.field.child('routability');
  if (!unset) {
    const syntax = checkRoutabilitySyntax(entry.routability, routabilityField);
    if (syntax) return [syntax];
  }
  // GEP-5093: an unset routability in status is understood as External.
  const routability = unset ? 'External' : (entry.routability as string);
  const out: Finding[] = isWellKnown(routability)
    ? checkAddressScope(entry, routability, ctx, { requesting: false, unset })
    : [];

  const identity = addressIdentity(entry);
  const requestedForValue = identity ? requests.byValue.get(identity) : undefined;
  if (requestedForValue && requestedForValue.routability !== routability) {
    out.push(
      finding('RoutabilityMismatch', routabilityField(), {
        routability,
        unset,
        requestedBy: requestedForValue.field.toString(),
        requested: [requestedForValue.routability],
      }),
    );
  } else if (!requestedForValue && requests.onlyScopes && !requests.onlyScopes.has(routability)) {
    out.push(
      finding('RoutabilityMismatch', routabilityField(), {
        routability,
        unset,
        requested: [...requests.onlyScopes],
      }),
    );
  }
  return out;
}

/** The condition pair the consistency rule reads; equal pairs are ratcheted. */
export function conditionKey(view: GatewayView): string {
  const pick = (c: ConditionView | undefined) => (c ? [c.status, c.reason, c.message] : null);
  return jsonText([pick(findCondition(view, 'AddressesAssigned')), pick(findCondition(view, 'Programmed'))]);
}

/** GEP-5093's AddressesAssigned condition: valid pairs, and what each implies. */
export function checkAddressesAssigned(view: GatewayView): Finding[] {
  const assigned = findCondition(view, 'AddressesAssigned');
  if (!assigned) return [];
  const field = STATUS_CONDITIONS.index(assigned.index);
  const s = typeof assigned.status === 'string' ? assigned.status : plainText(assigned.status);
  const r = typeof assigned.reason === 'string' ? assigned.reason : plainText(assigned.reason);
  if (s === 'True' && r === 'Assigned') return [];
  if (s === 'False' && r === 'PartiallyAssigned') {
    const message = assigned.message;
    if (typeof message === 'string' && message.trim() !== '') return [];
    return [finding('AddressesAssignedInconsistent', field.child('message'), { problem: 'message' })];
  }
  if (s === 'False' && r === 'NotAssigned') {
    const programmed = findCondition(view, 'Programmed');
    const ps = programmed?.status;
    const pr = programmed?.reason;
    if (ps === 'False' && pr === 'AddressNotAssigned') return [];
    return [
      finding('AddressesAssignedInconsistent', field, {
        problem: 'programmed',
        programmed: programmed ? `Programmed=${plainText(ps)}/${plainText(pr)}` : 'no Programmed condition',
      }),
    ];
  }
  return [
    finding('AddressesAssignedInconsistent', field.child('reason'), {
      problem: 'pair',
      status: s,
      reason: r,
    }),
  ];
}
