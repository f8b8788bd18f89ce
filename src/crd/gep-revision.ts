/**
 * Which GEP-5093 revision a Gateway CRD carries, read from its `routability`
 * schemas. Pure: the cluster watch, `check --from-cluster` and `crd-patch` all
 * decide with this one function, so they can never disagree.
 *
 * The rule (and why): the field exists only where the CRD declares it, so the
 * CRD is the cluster's statement of which API it speaks.
 * - this project's own crd-patch schema (its exact pattern) → provisional;
 * - a schema whose validation admits `""` → experimental: upstream's schema
 *   does (`size(self) == 0 || …`), and `""` is meaningless in the provisional
 *   revision, whose own schema rejects it;
 * - anything else (another pattern, a CEL rule this code cannot evaluate, or
 *   versions/lists that disagree) is undecidable: the caller must not guess.
 */
import { asRecord, own } from '../json/record.js';
import type { GepRevision } from '../rules/index.js';
import { ROUTABILITY_PATTERN } from '../rules/index.js';
import {
  UPSTREAM_ROUTABILITY_MAX_LENGTH,
  UPSTREAM_ROUTABILITY_MESSAGE,
  UPSTREAM_ROUTABILITY_RULE,
} from './schemas.js';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return asRecord(value) !== undefined;
}

function member(value: unknown, key: string): unknown {
  return own(asRecord(value), key);
}

export type SchemaVerdict =
  | { readonly kind: 'revision'; readonly revision: GepRevision; readonly basis: string }
  | { readonly kind: 'unrecognised'; readonly detail: string };

const squash = (text: string): string => text.replace(/\s+/g, '');

/** A CEL rule that is true for `""` whatever follows: `size(self) == 0 || …` or `self == '' || …`. */
function ruleAdmitsEmpty(rule: string): boolean {
  const s = squash(rule);
  return /^(size\(self\)==0|self==''|self=="")\|\|/.test(s);
}

/** What in a schema refuses `""` for sure, and what this server cannot read. */
interface EmptyAdmission {
  readonly rejects: string[];
  readonly unknown: string[];
}

/** The structural keywords (minLength, enum, pattern) read against `""`. */
function structuralRejects(schema: Json, pattern: unknown, into: EmptyAdmission): void {
  const minLength = member(schema, 'minLength');
  if (typeof minLength === 'number' && minLength > 0) into.rejects.push(`minLength ${minLength}`);
  const enumValues = member(schema, 'enum');
  if (Array.isArray(enumValues) && !enumValues.includes('')) into.rejects.push('an enum without ""');
  if (typeof pattern !== 'string') return;
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch {
    into.unknown.push(`a pattern this server cannot read (${pattern})`);
    return;
  }
  if (!re.test('')) into.rejects.push(`the pattern ${pattern}`);
}

/** The CEL rules: each must be one this server can see admits `""`. */
function celUnknowns(rules: readonly unknown[], into: EmptyAdmission): void {
  for (const rule of rules) {
    if (typeof rule !== 'string') into.unknown.push('a CEL validation without a rule');
    else if (!ruleAdmitsEmpty(rule)) into.unknown.push(`a CEL rule this server cannot evaluate (${rule})`);
  }
}

/** Why an experimental verdict was reached: upstream's exact schema, or one that admits `""`. */
function experimentalBasis(schema: Json, validations: unknown, rules: readonly unknown[]): string {
  const upstream =
    rules.length === 1 &&
    squash(String(rules[0])) === squash(UPSTREAM_ROUTABILITY_RULE) &&
    member(schema, 'maxLength') === UPSTREAM_ROUTABILITY_MAX_LENGTH;
  if (upstream) {
    const message = Array.isArray(validations) ? member(validations[0], 'message') : undefined;
    return `upstream's schema (its CEL rule${message === UPSTREAM_ROUTABILITY_MESSAGE ? ' and message' : ''}, maxLength 253)`;
  }
  return rules.length > 0
    ? 'a schema whose CEL validation admits ""'
    : 'a schema without validation that admits ""';
}

/** Decides one `routability` property schema. */
export function classifyRoutabilitySchema(schema: unknown): SchemaVerdict {
  if (!isObject(schema)) return { kind: 'unrecognised', detail: 'the routability schema is not an object' };
  const type = member(schema, 'type');
  if (type !== undefined && type !== 'string')
    return { kind: 'unrecognised', detail: `routability has type ${JSON.stringify(type)}, not string` };
  const pattern = member(schema, 'pattern');
  if (pattern === ROUTABILITY_PATTERN)
    return {
      kind: 'revision',
      revision: 'provisional',
      basis: "this project's crd-patch schema (its pattern)",
    };

  const found: EmptyAdmission = { rejects: [], unknown: [] };
  structuralRejects(schema, pattern, found);
  const validations = member(schema, 'x-kubernetes-validations');
  const rules = Array.isArray(validations) ? validations.map((v) => member(v, 'rule')) : [];
  celUnknowns(rules, found);
  if (found.rejects.length > 0)
    return {
      kind: 'unrecognised',
      detail: `a routability schema that rejects "" (${found.rejects.join(', ')}) but is not this project's crd-patch schema`,
    };
  if (found.unknown.length > 0) return { kind: 'unrecognised', detail: found.unknown.join('; ') };
  return { kind: 'revision', revision: 'experimental', basis: experimentalBasis(schema, validations, rules) };
}

export const ADDRESS_LISTS = ['spec', 'status'] as const;

/** One place a Gateway CRD can declare routability: a served version's spec or status addresses. */
export interface RoutabilityPlace {
  readonly version: string;
  readonly list: (typeof ADDRESS_LISTS)[number];
  /** E.g. `v1 spec.addresses[].routability`. */
  readonly label: string;
  readonly schema: unknown;
}

/** Every served version's spec and status address `routability` schema (undefined where absent). */
export function routabilityPlaces(crd: unknown): RoutabilityPlace[] {
  const versions = member(member(crd, 'spec'), 'versions');
  if (!Array.isArray(versions)) return [];
  const places: RoutabilityPlace[] = [];
  for (const v of versions) {
    if (member(v, 'served') === false) continue;
    const version = String(member(v, 'name') ?? '?');
    const root = member(member(v, 'schema'), 'openAPIV3Schema');
    for (const list of ADDRESS_LISTS) {
      const items = member(member(member(member(root, 'properties'), list), 'properties'), 'addresses');
      const schema = member(member(member(items, 'items'), 'properties'), 'routability');
      places.push({ version, list, label: `${version} ${list}.addresses[].routability`, schema });
    }
  }
  return places;
}

export type CrdRevision =
  | {
      readonly kind: 'revision';
      readonly revision: GepRevision;
      readonly basis: string;
      /** Places (served version + list) that lack the field although others carry it. */
      readonly missing: readonly string[];
    }
  /** The CRD is there but declares routability nowhere: the apiserver prunes the field. */
  | { readonly kind: 'field-missing'; readonly versions: readonly string[] }
  | { readonly kind: 'undecidable'; readonly detail: string };

/** The revision a Gateway CRD carries, from all its served versions' spec and status schemas. */
export function revisionOfGatewayCrd(crd: unknown): CrdRevision {
  const places = routabilityPlaces(crd);
  if (places.length === 0)
    return { kind: 'undecidable', detail: 'the CRD has no served version with an openAPIV3Schema' };
  const present = places.filter((p) => p.schema !== undefined);
  if (present.length === 0)
    return { kind: 'field-missing', versions: [...new Set(places.map((p) => p.version))] };
  const verdicts = present.map((p) => ({ place: p, verdict: classifyRoutabilitySchema(p.schema) }));
  const bad = verdicts.find((v) => v.verdict.kind === 'unrecognised');
  if (bad && bad.verdict.kind === 'unrecognised')
    return { kind: 'undecidable', detail: `${bad.place.label}: ${bad.verdict.detail}` };
  const found = new Map<GepRevision, string[]>();
  for (const { place, verdict } of verdicts)
    if (verdict.kind === 'revision')
      found.set(verdict.revision, [...(found.get(verdict.revision) ?? []), place.label]);
  if (found.size > 1)
    return {
      kind: 'undecidable',
      detail: `the versions disagree: ${[...found].map(([r, where]) => `${r} in ${where.join(', ')}`).join('; ')}`,
    };
  const first = verdicts[0]!.verdict as Extract<SchemaVerdict, { kind: 'revision' }>;
  return {
    kind: 'revision',
    revision: first.revision,
    basis: first.basis,
    missing: places.filter((p) => p.schema === undefined).map((p) => p.label),
  };
}

/** One line for logs, readiness and the CLI. */
export function describeCrdRevision(result: CrdRevision): string {
  switch (result.kind) {
    case 'revision':
      return `${result.revision} (${result.basis})${result.missing.length > 0 ? `; no routability in ${result.missing.join(', ')}` : ''}`;
    case 'field-missing':
      return `no routability field in ${result.versions.join(', ')}`;
    case 'undecidable':
      return `undecidable: ${result.detail}`;
  }
}

/**
 * What crd-patch says about a CRD that already declares routability (it is
 * then left unchanged): which revision it carries, and whether that differs
 * from the one asked for.
 */
export function foundRevisionNote(found: CrdRevision, asked: GepRevision): string {
  switch (found.kind) {
    case 'field-missing':
      return 'has no routability field';
    case 'undecidable':
      return (
        `already has routability, in a schema neither revision matches (${found.detail}): unchanged; ` +
        'serve with --gep-revision provisional or experimental set explicitly'
      );
    case 'revision': {
      const gaps = found.missing.length > 0 ? `; no routability in ${found.missing.join(', ')}` : '';
      const other =
        found.revision === asked
          ? ''
          : `; the ${asked} schema was not written: an existing routability schema is never replaced`;
      return `already has routability: ${found.revision} revision, ${found.basis}${gaps}: unchanged${other}`;
    }
  }
}
