/**
 * The RFC 6902 patch that adds `routability` to the Gateway CRD, and a pure
 * applier for it. No I/O here: the CLI reads and writes, this decides.
 *
 * Paths: /spec/versions/{0,1}/schema/openAPIV3Schema/properties/{spec,status}
 * /properties/addresses/items/properties/routability, guarded by `test` ops on
 * the version names so the patch fails instead of landing in the wrong place
 * if the CRD's layout ever changes. Annotations are never touched (Gateway
 * API's safe-upgrades policy looks at the bundle-version annotation).
 */
import { ROUTABILITY_MAX_LENGTH, ROUTABILITY_PATTERN } from '../rules/routability.js';

export const GATEWAY_CRD_NAME = 'gateways.gateway.networking.k8s.io';
/** The served versions, at the indices the upstream CRD has them. */
export const GATEWAY_CRD_VERSIONS = ['v1', 'v1beta1'] as const;
export const ADDRESS_LISTS = ['spec', 'status'] as const;

export type JsonPatchOp =
  | { readonly op: 'test'; readonly path: string; readonly value: unknown }
  | { readonly op: 'add'; readonly path: string; readonly value: unknown };

export interface RoutabilitySchema {
  readonly description: string;
  readonly type: 'string';
  readonly maxLength: number;
  readonly pattern: string;
}

export function routabilitySchema(): RoutabilitySchema {
  return {
    description:
      'Routability is the reachability scope of the address (GEP-5093). "External": reachable from ' +
      'anywhere, never from the cluster service IP range; unset in status means External. "Cluster": ' +
      'reachable from inside the cluster at least; an address from the service IP range. A ' +
      'domain-prefixed value (e.g. example.com/CorpWan) is implementation-specific.',
    type: 'string',
    maxLength: ROUTABILITY_MAX_LENGTH,
    pattern: ROUTABILITY_PATTERN,
  };
}

/** JSON pointer of the routability property of one address list in one version. */
export function routabilityPointer(versionIndex: number, list: (typeof ADDRESS_LISTS)[number]): string {
  return `/spec/versions/${versionIndex}/schema/openAPIV3Schema/properties/${list}/properties/addresses/items/properties/routability`;
}

/** The patch: two guards, then four adds (`add` replaces an existing member, so it is idempotent). */
export function routabilityPatch(): JsonPatchOp[] {
  const ops: JsonPatchOp[] = GATEWAY_CRD_VERSIONS.map((name, i) => ({
    op: 'test' as const,
    path: `/spec/versions/${i}/name`,
    value: name,
  }));
  GATEWAY_CRD_VERSIONS.forEach((_, i) => {
    for (const list of ADDRESS_LISTS)
      ops.push({ op: 'add', path: routabilityPointer(i, list), value: routabilitySchema() });
  });
  return ops;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function at(doc: unknown, path: readonly (string | number)[]): unknown {
  let node = doc;
  for (const key of path) {
    if (typeof key === 'number') node = Array.isArray(node) ? node[key] : undefined;
    else node = isObject(node) && Object.prototype.hasOwnProperty.call(node, key) ? node[key] : undefined;
  }
  return node;
}

/**
 * What is wrong with this document as a target of the patch: one line per
 * problem, each naming what was expected; empty when the patch fits.
 */
export function gatewayCrdProblems(doc: unknown): string[] {
  if (!isObject(doc)) return ['expected a CustomResourceDefinition object (YAML or JSON), found no object'];
  const kind = at(doc, ['kind']);
  const apiVersion = at(doc, ['apiVersion']);
  const name = at(doc, ['metadata', 'name']);
  if (kind !== 'CustomResourceDefinition' || apiVersion !== 'apiextensions.k8s.io/v1')
    return [
      `expected kind CustomResourceDefinition (apiextensions.k8s.io/v1) named ${GATEWAY_CRD_NAME}, found ${String(apiVersion ?? '?')} ${String(kind ?? '?')}${typeof name === 'string' ? ` ${name}` : ''}`,
    ];
  if (name !== GATEWAY_CRD_NAME) return [`expected the CRD ${GATEWAY_CRD_NAME}, found ${String(name)}`];
  const versions = at(doc, ['spec', 'versions']);
  if (!Array.isArray(versions)) return ['expected spec.versions to be a list'];
  const problems: string[] = [];
  GATEWAY_CRD_VERSIONS.forEach((expected, i) => {
    const found = at(versions, [i, 'name']);
    if (found !== expected)
      problems.push(
        `expected spec.versions[${i}].name to be ${expected}, found ${found === undefined ? 'nothing' : String(found)}`,
      );
  });
  versions.forEach((v, i) => {
    if (i >= GATEWAY_CRD_VERSIONS.length && at(v, ['served']) === true)
      problems.push(
        `expected only ${GATEWAY_CRD_VERSIONS.join(' and ')} to be served, but spec.versions[${i}] (${String(at(v, ['name']))}) is served too`,
      );
  });
  if (problems.length > 0) return problems;
  GATEWAY_CRD_VERSIONS.forEach((version, i) => {
    for (const list of ADDRESS_LISTS) {
      const path = [
        i,
        'schema',
        'openAPIV3Schema',
        'properties',
        list,
        'properties',
        'addresses',
        'items',
        'properties',
      ];
      if (!isObject(at(versions, path)))
        problems.push(
          `expected an object schema at spec.versions[${i}] (${version}).schema.openAPIV3Schema.properties.${list}.properties.addresses.items.properties`,
        );
    }
  });
  return problems;
}

/** True when all four places already carry exactly this patch's schema. */
export function hasRoutability(doc: unknown): boolean {
  const want = JSON.stringify(routabilitySchema());
  return GATEWAY_CRD_VERSIONS.every((_, i) =>
    ADDRESS_LISTS.every((list) => {
      const path = routabilityPointer(i, list).split('/').slice(1);
      const node = at(
        doc,
        path.map((p) => (/^\d+$/.test(p) ? Number(p) : p)),
      );
      return (
        isObject(node) &&
        JSON.stringify(sortKeys(node)) === JSON.stringify(sortKeys(JSON.parse(want) as Json))
      );
    }),
  );
}

function sortKeys(value: Json): Json {
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, value[k]]),
  );
}

export class JsonPatchError extends Error {}

function unescape(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** Applies `test` and `add` ops to a copy of the document (RFC 6902 semantics for those two). */
export function applyJsonPatch<T>(doc: T, ops: readonly JsonPatchOp[]): T {
  const out = structuredClone(doc);
  for (const op of ops) {
    const tokens = op.path.split('/').slice(1).map(unescape);
    if (!op.path.startsWith('/') || tokens.length === 0)
      throw new JsonPatchError(`${op.op} ${op.path}: bad path`);
    const last = tokens.pop()!;
    let parent: unknown = out;
    for (const t of tokens) {
      parent = Array.isArray(parent) ? parent[Number(t)] : isObject(parent) ? parent[t] : undefined;
      if (typeof parent !== 'object' || parent === null)
        throw new JsonPatchError(`${op.op} ${op.path}: no such parent`);
    }
    if (op.op === 'test') {
      const actual = Array.isArray(parent) ? parent[Number(last)] : (parent as Json)[last];
      if (JSON.stringify(actual) !== JSON.stringify(op.value))
        throw new JsonPatchError(
          `test ${op.path}: expected ${JSON.stringify(op.value)}, found ${JSON.stringify(actual) ?? 'nothing'}`,
        );
    } else if (Array.isArray(parent)) {
      parent.splice(last === '-' ? parent.length : Number(last), 0, structuredClone(op.value));
    } else {
      (parent as Json)[last] = structuredClone(op.value);
    }
  }
  return out;
}

export type PatchResult =
  | { readonly ok: true; readonly crd: Json; readonly changed: boolean }
  | { readonly ok: false; readonly problems: readonly string[] };

/** Checks the layout, then patches a copy. Re-applying to a patched CRD changes nothing. */
export function patchGatewayCrd(doc: unknown): PatchResult {
  const problems = gatewayCrdProblems(doc);
  if (problems.length > 0) return { ok: false, problems };
  const changed = !hasRoutability(doc);
  try {
    return { ok: true, crd: applyJsonPatch(doc as Json, routabilityPatch()), changed };
  } catch (err) {
    return { ok: false, problems: [(err as Error).message] };
  }
}
