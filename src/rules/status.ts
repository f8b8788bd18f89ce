/** Rules for status.addresses and the AddressesAssigned condition: is the report honest? */
import { FieldPath } from './field-path.js';
import {
  addressIdentity,
  checkAddressScope,
  checkRoutabilitySyntax,
  isWellKnown,
  type AddressEntry,
} from './routability.js';
import { jsonText, plainText } from './json-text.js';
import { asRecord, finding, own, type Finding, type Record_, type RuleContext } from './types.js';

export const STATUS_ADDRESSES = FieldPath.root('status', 'addresses');
const STATUS_CONDITIONS = FieldPath.root('status', 'conditions');

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

function conditionsOf(status: Record_ | undefined): { record: Record_; index: number }[] {
  const list = own(status, 'conditions');
  if (!Array.isArray(list)) return [];
  const out: { record: Record_; index: number }[] = [];
  list.forEach((c: unknown, index) => {
    const record = asRecord(c);
    if (record) out.push({ record, index });
  });
  return out;
}

function findCondition(
  status: Record_ | undefined,
  type: string,
): { record: Record_; index: number } | undefined {
  return conditionsOf(status).find((c) => own(c.record, 'type') === type);
}

/** The condition pair the consistency rule reads; equal pairs are ratcheted. */
export function conditionKey(status: Record_ | undefined): string {
  const pick = (c: { record: Record_ } | undefined) =>
    c ? [own(c.record, 'status'), own(c.record, 'reason'), own(c.record, 'message')] : null;
  return jsonText([
    pick(findCondition(status, 'AddressesAssigned')),
    pick(findCondition(status, 'Programmed')),
  ]);
}

/** GEP-5093's AddressesAssigned condition: valid pairs, and what each implies. */
export function checkAddressesAssigned(status: Record_ | undefined): Finding[] {
  const assigned = findCondition(status, 'AddressesAssigned');
  if (!assigned) return [];
  const field = STATUS_CONDITIONS.index(assigned.index);
  const conditionStatus = own(assigned.record, 'status');
  const reason = own(assigned.record, 'reason');
  const s = typeof conditionStatus === 'string' ? conditionStatus : plainText(conditionStatus);
  const r = typeof reason === 'string' ? reason : plainText(reason);
  if (s === 'True' && r === 'Assigned') return [];
  if (s === 'False' && r === 'PartiallyAssigned') {
    const message = own(assigned.record, 'message');
    if (typeof message === 'string' && message.trim() !== '') return [];
    return [finding('AddressesAssignedInconsistent', field.child('message'), { problem: 'message' })];
  }
  if (s === 'False' && r === 'NotAssigned') {
    const programmed = findCondition(status, 'Programmed');
    const ps = programmed ? own(programmed.record, 'status') : undefined;
    const pr = programmed ? own(programmed.record, 'reason') : undefined;
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
