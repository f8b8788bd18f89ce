/**
 * RoutabilityMismatch as CEL over one status entry `a`: the status rule that
 * reads spec. On a status write the API server gives the policy the whole
 * object, spec included, so the requests are read from `object.spec`; the
 * variables below index them once per request. Pure: strings in, strings out.
 */
import type { GepRevision } from '../rules/index.js';
import { celString, renderMessage, token } from './cel.js';
import { INDEXES } from './indexes.js';
import { badSyntax, catalogueMessage, choose, STR, typeOf, type RuleCel } from './cel-rules.js';

/** The request is a write of gateways/status. */
export const STATUS_REQUEST = "(has(request.subResource) && request.subResource == 'status')";

/** A spec request's routability the engine leaves unset (provisional spec unset: any). No valid value has a space. */
export const ANY = celString(' any');

/**
 * The engine's addressIdentity as text: IPs canonical, hostnames lower-cased
 * without a trailing dot, other types as written; `''` where it has none.
 */
export function identity(x: string): string {
  const v = `${x}.value`;
  const t = typeOf(x);
  const host = `${v}.lowerAscii()`;
  return (
    `(!has(${v}) || !${STR(v)} ? '' : ${t} == 'IPAddress' ? (isIP(${v}) ? 'IPAddress/' + string(ip(${v})) : '') : ` +
    `${t} == 'Hostname' ? 'Hostname/' + (${host}.endsWith('.') ? ${host}.substring(0, size(${host}) - 1) : ${host}) : ` +
    `${t} + '/' + ${v})`
  );
}

/** The effective routability of a status entry: provisional unset is External, experimental unset is `""`. */
export const statusEffective = (a: string, revision: GepRevision) =>
  `(has(${a}.routability) ? ${a}.routability : ${revision === 'experimental' ? "''" : "'External'"})`;

/** Upstream's match: a `""` request accepts `""` or Cluster; others only themselves. */
export const accepts = (requested: string, reported: string) =>
  `(${requested} == '' ? (${reported} == '' || ${reported} == 'Cluster') : ${requested} == ${reported})`;

/** The variables RoutabilityMismatch reads: spec's requests on a status write, their identities and routabilities. */
export function requestVariables(revision: GepRevision): { name: string; expression: string }[] {
  const effective =
    revision === 'experimental'
      ? `(has(s.routability) ? s.routability : '')`
      : `(has(s.routability) ? s.routability : ${ANY})`;
  const hasRequest = revision === 'experimental' ? 'true' : 'has(s.routability)';
  const any =
    revision === 'experimental'
      ? 'size(variables.requests) == 0'
      : 'size(variables.requests) == 0 || variables.requests.exists(s, !has(s.routability))';
  return [
    {
      name: 'requests',
      expression: `${STATUS_REQUEST} && has(object.spec) && has(object.spec.addresses) ? object.spec.addresses : []`,
    },
    { name: 'requestIds', expression: `variables.requests.map(s, ${hasRequest} ? ${identity('s')} : '')` },
    { name: 'requestRoutabilities', expression: `variables.requests.map(s, ${effective})` },
    { name: 'requestsAny', expression: any },
    { name: 'statusIds', expression: `variables.status.map(a, ${identity('a')})` },
    {
      // Per status entry: the first spec entry that requested a routability for its value, or -1.
      name: 'statusRequestAt',
      expression:
        `${INDEXES}.filter(i, i < size(variables.statusIds)).map(i, ` +
        `variables.statusIds[i] != '' && variables.statusIds[i] in variables.requestIds ? ` +
        `${INDEXES}.filter(j, j < size(variables.requestIds) && variables.requestIds[j] == variables.statusIds[i])[0] : -1)`,
    },
  ];
}

/** How a routability reads in a message: `""` quoted. */
const shown = (r: string) => `(${r} == '' ? '""' : ${r})`;

export function mismatch(revision: GepRevision): RuleCel {
  // The rule is evaluated per index `i` of the status list (byIndex), the entry being `a`.
  const at = (i: string) => `variables.statusRequestAt[${i}]`;
  const requested = (i: string) => `variables.requestRoutabilities[${at(i)}]`;
  const e = statusEffective('a', revision);
  return {
    code: 'RoutabilityMismatch',
    list: 'status',
    severity: 'violation',
    byIndex: true,
    // AddressesAssignedInconsistent reads these too; the two rules always share a policy (both follow --status-policy).
    variables: requestVariables(revision),
    predicate:
      `(!${badSyntax('a', revision)} && (${at('i')} >= 0 ? !${accepts(requested('i'), e)} : ` +
      `(!variables.requestsAny && !variables.requestRoutabilities.exists(r, ${accepts('r', e)}))))`,
    field: 'routability',
    message: (entry, field, index) => {
      const eff = statusEffective(entry, revision);
      const req = requested(index);
      const accepted = `(${req} == '' ? ['""', 'Cluster'] : [${req}])`;
      // Every routability the spec asks for, each once, in spec order (`""` reads `"", Cluster`).
      const unique =
        `${INDEXES}.filter(i, i < size(variables.requestRoutabilities) && ` +
        `!${INDEXES}.exists(j, j < i && variables.requestRoutabilities[j] == variables.requestRoutabilities[i]))` +
        `.map(i, variables.requestRoutabilities[i] == '' ? '"", Cluster' : variables.requestRoutabilities[i])`;
      const variant = (unset: boolean, byEntry: boolean) =>
        catalogueMessage(
          (f, v) =>
            // The quoted value is JSON-quoted by the catalogue (`""` reads `"\"\""`); the detail has it plain.
            renderMessage('RoutabilityMismatch', f, {
              routability: v,
              unset,
              ...(byEntry ? { requestedBy: token('requestedBy') } : {}),
              requested: [token('requested')],
            }).replace(`"${v}"`, `"${token('quoted')}"`),
          {
            entry,
            field,
            sub: 'routability',
            extra: {
              value: shown(eff),
              quoted: `(${eff} == '' ? ${celString('\\"\\"')} : ${eff})`,
              requestedBy: `'spec.addresses[' + string(${at(index)}) + ']'`,
              requested: byEntry ? `${accepted}.join(' or ')` : `${unique}.join(', ')`,
            },
          },
        );
      const selector = `(${at(index)} >= 0 ? 'value' : '') + (has(${entry}.routability) ? '' : 'Unset')`;
      return choose(selector, [
        ['value', variant(false, true)],
        ['valueUnset', variant(true, true)],
        ['Unset', variant(true, false)],
        ['', variant(false, false)],
      ]);
    },
  };
}
