/**
 * AddressesAssignedInconsistent as CEL: GEP-5093's AddressesAssigned condition
 * against Programmed and the addresses, on status writes. Unlike the per-entry
 * rules it judges the condition pair, so it is ratcheted as the engine does:
 * when AddressesAssigned and Programmed (status, reason, message) equal the
 * stored ones, nothing is re-judged. Pure: strings in, strings out.
 */
import type { GepRevision } from '../rules/index.js';
import { messageExpression, renderMessage, staticMessage, token } from './cel.js';
import { INDEXES } from './indexes.js';
import { choose, STR, typeOf, type RuleCel } from './cel-rules.js';
import { accepts, ANY, identity as identityOf, statusEffective, STATUS_REQUEST } from './status-rules.js';

const conditionsOf = (object: string, operation: string) =>
  `${STATUS_REQUEST}${operation} && ${object} != null && has(${object}.status) && has(${object}.status.conditions) ? ${object}.status.conditions : []`;
const find = (list: string, type: string) =>
  `${INDEXES}.filter(i, i < size(${list}) && has(${list}[i].type) && ${list}[i].type == '${type}')`;
const textOf = (x: string) => `(${STR(x)} ? ${x} : string(${x}))`;
/** One condition field as text (absent: empty). */
const get = (c: string, f: string) => `(has(${c}.${f}) ? ${textOf(`${c}.${f}`)} : '')`;
/** The pair the rule is ratcheted by: AddressesAssigned and Programmed, each as status, reason, message. */
const pairKey = (list: string, a: string, p: string) =>
  [a, p]
    .map(
      (at) =>
        `(size(${at}) == 0 ? ['-'] : ['+', ${get(`${list}[${at}[0]]`, 'status')}, ${get(`${list}[${at}[0]]`, 'reason')}, ${get(`${list}[${at}[0]]`, 'message')}])`,
    )
    .join(' + ');

const A = 'variables.conditions[variables.assignedAt[0]]';
const P = 'variables.conditions[variables.programmedAt[0]]';

export function assignedVariables(revision: GepRevision): { name: string; expression: string }[] {
  const success = revision === 'experimental' ? 'AddressesAssigned' : 'Assigned';
  const st = 'variables.status';
  const sat = (i: string, j: string) =>
    `(${typeOf(`${st}[${i}]`)} == ${typeOf(`variables.requests[${j}]`)} && ` +
    `(!has(variables.requests[${j}].value) || variables.statusIds[${i}] == variables.specIds[${j}]) && ` +
    `(variables.requestRoutabilities[${j}] == ${ANY} || ${accepts(`variables.requestRoutabilities[${j}]`, statusEffective(`${st}[${i}]`, revision))}))`;
  const s = get(A, 'status');
  const r = get(A, 'reason');
  const programmedOk = `(size(variables.programmedAt) > 0 && ${get(P, 'status')} == 'False' && ${get(P, 'reason')} == 'AddressNotAssigned')`;
  const problem =
    `size(variables.assignedAt) == 0 ? '' : ` +
    `${s} == 'True' && ${r} == '${success}' ? (size(variables.unmatchedAt) > 0 ? 'unmatched' : '') : ` +
    `${s} == 'False' && ${r} == 'PartiallyAssigned' ? ` +
    `((!has(${A}.message) || !${STR(`${A}.message`)} || ${A}.message.trim() == '') ? 'message' : ` +
    `(size(variables.programmedAt) > 0 && ${get(P, 'status')} != 'True') ? 'partialProgrammed' : '') : ` +
    `${s} == 'False' && ${r} == 'NotAssigned' ? (!${programmedOk} ? 'programmed' : size(variables.satisfiedAt) > 0 ? 'satisfied' : '') : 'pair'`;
  return [
    { name: 'conditions', expression: conditionsOf('object', " && request.operation == 'UPDATE'") },
    { name: 'oldConditions', expression: conditionsOf('oldObject', '') },
    { name: 'assignedAt', expression: find('variables.conditions', 'AddressesAssigned') },
    { name: 'programmedAt', expression: find('variables.conditions', 'Programmed') },
    {
      name: 'assignedUnchanged',
      expression:
        `oldObject != null && has(oldObject.status) && ` +
        `${pairKey('variables.conditions', 'variables.assignedAt', 'variables.programmedAt')} == ` +
        `${pairKey('variables.oldConditions', find('variables.oldConditions', 'AddressesAssigned'), find('variables.oldConditions', 'Programmed'))}`,
    },
    { name: 'specIds', expression: `variables.requests.map(s, ${identityOf('s')})` },
    {
      name: 'unmatchedAt',
      expression: `${INDEXES}.filter(j, j < size(variables.requests) && !${INDEXES}.exists(i, i < size(${st}) && ${sat('i', 'j')}))`,
    },
    {
      name: 'satisfiedAt',
      expression: `${INDEXES}.filter(i, i < size(${st}) && ${INDEXES}.exists(j, j < size(variables.requests) && ${sat('i', 'j')}))`,
    },
    {
      name: 'satisfiedBy',
      expression: `size(variables.satisfiedAt) == 0 ? -1 : ${INDEXES}.filter(j, j < size(variables.requests) && ${sat('variables.satisfiedAt[0]', 'j')})[0]`,
    },
    { name: 'assignedProblem', expression: problem },
  ];
}

type Problem = 'pair' | 'unmatched' | 'message' | 'partialProgrammed' | 'programmed' | 'satisfied';

/** The rule as one validation over the whole status: the engine's first finding, its field and message. */
export function assigned(revision: GepRevision): RuleCel {
  const success = revision === 'experimental' ? 'AddressesAssigned' : 'Assigned';
  const cond = `'status.conditions[' + string(variables.assignedAt[0]) + ']'`;
  const fields: Record<Problem, string> = {
    pair: `${cond} + '.reason'`,
    unmatched: `${cond} + '.status'`,
    message: `${cond} + '.message'`,
    partialProgrammed: `'status.conditions[' + string(variables.programmedAt[0]) + '].status'`,
    programmed: cond,
    satisfied: `'status.addresses[' + string(variables.satisfiedAt[0]) + ']'`,
  };
  const extra = {
    status: get(A, 'status'),
    reason: get(A, 'reason'),
    entry: `'spec.addresses[' + string(variables.unmatchedAt[0]) + ']'`,
    programmed: `(size(variables.programmedAt) > 0 ? 'Programmed=' + ${get(P, 'status')} + '/' + ${get(P, 'reason')} : 'no Programmed condition')`,
    requestedBy: `'spec.addresses[' + string(variables.satisfiedBy) + ']'`,
  };
  const params: Record<Problem, object> = {
    pair: { problem: 'pair', status: token('status'), reason: token('reason'), success },
    unmatched: { problem: 'unmatched', entry: token('entry'), success },
    message: { problem: 'message' },
    partialProgrammed: { problem: 'partialProgrammed', programmed: token('programmed') },
    programmed: { problem: 'programmed', programmed: token('programmed') },
    satisfied: { problem: 'satisfied', requestedBy: token('requestedBy') },
  };
  const variants = (Object.keys(fields) as Problem[]).map((problem) => {
    const rendered = renderMessage(
      'AddressesAssignedInconsistent',
      token('field'),
      params[problem] as Parameters<typeof renderMessage<'AddressesAssignedInconsistent'>>[2],
    );
    return [
      problem,
      {
        expression: messageExpression(rendered, { field: fields[problem], ...extra }),
        fallback: staticMessage(rendered, { field: 'status.conditions[*]' }),
      },
    ] as const;
  });
  const { expression, fallback } = choose('variables.assignedProblem', variants);
  return {
    code: 'AddressesAssignedInconsistent',
    list: 'status',
    severity: 'violation',
    predicate: 'false',
    variables: assignedVariables(revision),
    field: 'routability',
    message: () => ({ expression, fallback }),
    whole: {
      expression: "variables.assignedProblem == '' || variables.assignedUnchanged",
      message: fallback,
      messageExpression: expression,
    },
  };
}
