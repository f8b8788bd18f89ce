/**
 * The RFC 6902 patch that adds `routability` to the Gateway CRD, and a pure
 * applier for it. No I/O here: the CLI reads and writes, this decides.
 *
 * Paths: /spec/versions/{0,1}/schema/openAPIV3Schema/properties/{spec,status}
 * /properties/addresses/items/properties/routability, guarded by `test` ops on
 * the version names so the patch fails instead of landing in the wrong place
 * if the CRD's layout ever changes, and by a `test` for null at each of the
 * four places, so that the printed patch applied by hand (`kubectl patch
 * --type json`) refuses a CRD that already declares routability instead of
 * replacing one revision's schema by the other's, as `--apply` refuses. Annotations are never touched (Gateway
 * API's safe-upgrades policy looks at the bundle-version annotation).
 */
import { errorMessage } from '../error-text.js';
import { asRecord, own } from '../json/record.js';
import { GATEWAY_API_GROUP, type GepRevision } from '../rules/index.js';
import { ADDRESS_LISTS, revisionOfGatewayCrd, type CrdRevision } from './gep-revision.js';
import {
  routabilitySchemaFor,
  type ExperimentalRoutabilitySchema,
  type ProvisionalRoutabilitySchema,
} from './schemas.js';

export { ADDRESS_LISTS } from './gep-revision.js';

export const GATEWAY_CRD_NAME = `gateways.${GATEWAY_API_GROUP}`;
/** The served versions, at the indices the upstream CRD has them. */
export const GATEWAY_CRD_VERSIONS = ['v1', 'v1beta1'] as const;

export type JsonPatchOp =
  | { readonly op: 'test'; readonly path: string; readonly value: unknown }
  | { readonly op: 'add'; readonly path: string; readonly value: unknown };

export type RoutabilitySchema = ProvisionalRoutabilitySchema | ExperimentalRoutabilitySchema;

/** JSON pointer of the routability property of one address list in one version. */
export function routabilityPointer(versionIndex: number, list: (typeof ADDRESS_LISTS)[number]): string {
  return `/spec/versions/${versionIndex}/schema/openAPIV3Schema/properties/${list}/properties/addresses/items/properties/routability`;
}

/**
 * The patch for one revision: two version guards, four absence guards, then
 * four adds. An absence guard is `test` with value null: the Kubernetes API
 * server's JSON patch (evanphx/json-patch, also used by kustomize) passes it
 * when the member is missing and fails it when the member holds a schema, so
 * a CRD that already declares routability, of either revision, is left
 * unchanged and `kubectl patch` says which path failed its test.
 */
export function routabilityPatch(revision: GepRevision = 'provisional'): JsonPatchOp[] {
  const ops: JsonPatchOp[] = GATEWAY_CRD_VERSIONS.map((name, i) => ({
    op: 'test' as const,
    path: `/spec/versions/${i}/name`,
    value: name,
  }));
  GATEWAY_CRD_VERSIONS.forEach((_, i) => {
    for (const list of ADDRESS_LISTS)
      ops.push({ op: 'test', path: routabilityPointer(i, list), value: null });
  });
  GATEWAY_CRD_VERSIONS.forEach((_, i) => {
    for (const list of ADDRESS_LISTS)
      ops.push({ op: 'add', path: routabilityPointer(i, list), value: routabilitySchemaFor(revision) });
  });
  return ops;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return asRecord(value) !== undefined;
}

function at(doc: unknown, path: readonly (string | number)[]): unknown {
  let node = doc;
  for (const key of path) {
    if (typeof key === 'number') node = Array.isArray(node) ? node[key] : undefined;
    else node = own(asRecord(node), key);
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

export class JsonPatchError extends Error {}

function unescape(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** Throws unless `actual` is the op's value; a missing member counts as null. */
function testOp(op: JsonPatchOp, actual: unknown): void {
  const absentAsNull = op.value === null && actual === undefined;
  if (!absentAsNull && JSON.stringify(actual) !== JSON.stringify(op.value))
    throw new JsonPatchError(
      `test ${op.path}: expected ${JSON.stringify(op.value)}, found ${JSON.stringify(actual) ?? 'nothing'}`,
    );
}

/**
 * Applies `test` and `add` ops to a copy of the document, as the Kubernetes
 * API server does: RFC 6902 semantics for those two, except that a `test` for
 * null passes on a missing member of an existing parent (evanphx/json-patch).
 */
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
      testOp(op, Array.isArray(parent) ? parent[Number(last)] : (parent as Json)[last]);
    } else if (Array.isArray(parent)) {
      parent.splice(last === '-' ? parent.length : Number(last), 0, structuredClone(op.value));
    } else {
      (parent as Json)[last] = structuredClone(op.value);
    }
  }
  return out;
}

export type PatchResult =
  | {
      readonly ok: true;
      readonly crd: Json;
      /** False when the CRD already carried routability: it is then returned as it was. */
      readonly changed: boolean;
      /** What the CRD carried before: the revision found, or field-missing when it was patched. */
      readonly found: CrdRevision;
    }
  | { readonly ok: false; readonly problems: readonly string[] };

/**
 * Checks the layout, then patches a copy with the revision's schema. A CRD
 * that already declares routability anywhere is left exactly as it is (a
 * patch never replaces one revision's schema by the other's): `found` says
 * which revision it carries.
 */
export function patchGatewayCrd(doc: unknown, revision: GepRevision = 'provisional'): PatchResult {
  const problems = gatewayCrdProblems(doc);
  if (problems.length > 0) return { ok: false, problems };
  const found = revisionOfGatewayCrd(doc);
  if (found.kind !== 'field-missing')
    return { ok: true, crd: structuredClone(doc as Json), changed: false, found };
  try {
    return { ok: true, crd: applyJsonPatch(doc as Json, routabilityPatch(revision)), changed: true, found };
  } catch (err) {
    return { ok: false, problems: [errorMessage(err)] };
  }
}
