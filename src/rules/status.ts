/** Rules for status.addresses and the AddressesAssigned condition: is the report honest? */
import type { FieldPath } from './field-path.js';
import {
  findCondition,
  STATUS_CONDITIONS,
  type AddressEntry,
  type ConditionView,
  type GatewayView,
} from './gateway.js';
import { jsonText, plainText } from './json-text.js';
import { addressIdentity, checkAddressScope, effectiveRoutability, readRoutability } from './routability.js';
import { finding, type Finding, type RuleContext } from './types.js';

/** One spec entry as the matching rules read it. */
interface SpecRequest {
  readonly entry: AddressEntry;
  readonly identity: string | undefined;
  /** Effective routability: undefined (provisional unset: anything), `""`, `Cluster`, prefixed, … */
  readonly routability: unknown;
}

/** What spec requested, indexed once per request for the matching rules. */
export interface SpecRequests {
  readonly all: readonly SpecRequest[];
  /** identity → the first spec entry that requested a routability for that exact value. */
  readonly byValue: ReadonlyMap<string, SpecRequest>;
  /** The routabilities a status address may have to match some entry; undefined when any may. */
  readonly scopes: ReadonlySet<unknown> | undefined;
}

export function indexSpecRequests(spec: readonly AddressEntry[], ctx: RuleContext): SpecRequests {
  const all: SpecRequest[] = [];
  const byValue = new Map<string, SpecRequest>();
  const scopes = new Set<unknown>();
  let any = spec.length === 0;
  for (const entry of spec) {
    const routability = effectiveRoutability(entry, ctx, false);
    const request = { entry, identity: addressIdentity(entry), routability };
    all.push(request);
    if (routability === undefined) any = true;
    else for (const r of acceptedFor(routability)) scopes.add(r);
    if (routability !== undefined && request.identity && !byValue.has(request.identity))
      byValue.set(request.identity, request);
  }
  return { all, byValue, scopes: any ? undefined : scopes };
}

/** Upstream: an unset or `""` request matches a status `""` or `Cluster`; others need the same value. */
function acceptedFor(requested: unknown): readonly unknown[] {
  return requested === '' ? ['', 'Cluster'] : [requested];
}

function routabilityMatches(requested: unknown, reported: unknown): boolean {
  return requested === undefined || acceptedFor(requested).includes(reported);
}

/** Upstream's match: type equal, value equal when requested, routability as above. */
function satisfies(status: AddressEntry, statusRoutability: unknown, request: SpecRequest): boolean {
  if (status.type !== request.entry.type) return false;
  if (request.entry.value !== undefined && addressIdentity(status) !== request.identity) return false;
  return routabilityMatches(request.routability, statusRoutability);
}

/** How a routability reads in a message: `""` quoted, the rest as written. */
const shown = (r: unknown) => (r === '' ? '""' : typeof r === 'string' ? r : jsonText(r));

export function checkStatusAddress(entry: AddressEntry, ctx: RuleContext, requests: SpecRequests): Finding[] {
  const routability = readRoutability(entry, ctx, true);
  if (routability.kind === 'invalid') return [routability.finding];
  const out: Finding[] =
    routability.kind === 'External' || routability.kind === 'Cluster'
      ? checkAddressScope(entry, routability, ctx, { requesting: false })
      : [];

  const effective = effectiveRoutability(entry, ctx, true);
  const unset = entry.routability === undefined;
  const routabilityField = () => entry.field.child('routability');
  const identity = addressIdentity(entry);
  const requestedForValue = identity ? requests.byValue.get(identity) : undefined;
  if (requestedForValue && !routabilityMatches(requestedForValue.routability, effective)) {
    out.push(
      finding('RoutabilityMismatch', routabilityField(), {
        routability: shown(effective),
        unset,
        requestedBy: requestedForValue.entry.field.toString(),
        requested: acceptedFor(requestedForValue.routability).map(shown),
      }),
    );
  } else if (!requestedForValue && requests.scopes && !requests.scopes.has(effective)) {
    out.push(
      finding('RoutabilityMismatch', routabilityField(), {
        routability: shown(effective),
        unset,
        requested: [...requests.scopes].map(shown),
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

/** The success reason of AddressesAssigned: renamed by upstream's experimental revision. */
export function assignedReason(ctx: RuleContext): string {
  return ctx.revision === 'experimental' ? 'AddressesAssigned' : 'Assigned';
}

const conditionText = (c: ConditionView | undefined) =>
  c ? `Programmed=${plainText(c.status)}/${plainText(c.reason)}` : 'no Programmed condition';

/** What the checks of one AddressesAssigned pair read. */
interface AssignedCheck {
  readonly view: GatewayView;
  readonly ctx: RuleContext;
  readonly requests: SpecRequests;
  readonly assigned: ConditionView;
  /** The condition's path. */
  readonly field: FieldPath;
  readonly programmed: ConditionView | undefined;
  readonly success: string;
}

/** GEP-5093's AddressesAssigned condition: valid pairs, and what each implies for Programmed and the addresses. */
export function checkAddressesAssigned(
  view: GatewayView,
  ctx: RuleContext,
  requests: SpecRequests,
): Finding[] {
  const assigned = findCondition(view, 'AddressesAssigned');
  if (!assigned) return [];
  const at: AssignedCheck = {
    view,
    ctx,
    requests,
    assigned,
    field: STATUS_CONDITIONS.index(assigned.index),
    programmed: findCondition(view, 'Programmed'),
    success: assignedReason(ctx),
  };
  const s = typeof assigned.status === 'string' ? assigned.status : plainText(assigned.status);
  const r = typeof assigned.reason === 'string' ? assigned.reason : plainText(assigned.reason);
  if (s === 'True' && r === at.success) return checkAllAssigned(at);
  if (s === 'False' && r === 'PartiallyAssigned') return checkPartiallyAssigned(at);
  if (s === 'False' && r === 'NotAssigned') return checkNotAssigned(at);
  return [
    finding('AddressesAssignedInconsistent', at.field.child('reason'), {
      problem: 'pair',
      status: s,
      reason: r,
      success: at.success,
    }),
  ];
}

/** True with the success reason: every spec entry has a status address that satisfies it. */
function checkAllAssigned({ view, ctx, requests, field, success }: AssignedCheck): Finding[] {
  const out: Finding[] = [];
  for (const request of requests.all) {
    const met = view.status.entries.some((e) => satisfies(e, effectiveRoutability(e, ctx, true), request));
    if (!met)
      out.push(
        finding('AddressesAssignedInconsistent', field.child('status'), {
          problem: 'unmatched',
          entry: request.entry.field.toString(),
          success,
        }),
      );
  }
  return out;
}

/** False/PartiallyAssigned: a message says what is missing, and the Gateway is still programmed. */
function checkPartiallyAssigned({ assigned, field, programmed }: AssignedCheck): Finding[] {
  const out: Finding[] = [];
  const message = assigned.message;
  if (typeof message !== 'string' || message.trim() === '')
    out.push(finding('AddressesAssignedInconsistent', field.child('message'), { problem: 'message' }));
  // The Gateway is still programmed with the addresses it could satisfy.
  if (programmed && programmed.status !== 'True')
    out.push(
      finding('AddressesAssignedInconsistent', STATUS_CONDITIONS.index(programmed.index).child('status'), {
        problem: 'partialProgrammed',
        programmed: conditionText(programmed),
      }),
    );
  return out;
}

/** False/NotAssigned: Programmed says AddressNotAssigned, and no status address satisfies a request. */
function checkNotAssigned({ view, ctx, requests, field, programmed }: AssignedCheck): Finding[] {
  const out: Finding[] = [];
  if (programmed?.status !== 'False' || programmed.reason !== 'AddressNotAssigned')
    out.push(
      finding('AddressesAssignedInconsistent', field, {
        problem: 'programmed',
        programmed: conditionText(programmed),
      }),
    );
  for (const entry of view.status.entries) {
    const effective = effectiveRoutability(entry, ctx, true);
    const request = requests.all.find((req) => satisfies(entry, effective, req));
    if (request)
      out.push(
        finding('AddressesAssignedInconsistent', entry.field, {
          problem: 'satisfied',
          requestedBy: request.entry.field.toString(),
        }),
      );
  }
  return out;
}
