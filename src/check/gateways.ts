/**
 * Gateway extraction: finds the Gateways in a parsed document — the document
 * itself, or the items of a `kind: List` / `*List` — by reading `apiVersion`
 * and `kind` straight from the syntax tree, so that other objects are counted
 * and skipped without being converted to JavaScript values.
 */
import { isAlias, isMap, isScalar, isSeq, type Document, type Node, type YAMLMap } from 'yaml';
import { GATEWAY_API_GROUP } from '../rules/index.js';

/** The versions Gateway API's Gateway CRD serves (v1, v1beta1) share one schema, so the same rules apply. */
const GATEWAY_API_VERSIONS: ReadonlySet<string> = new Set([
  `${GATEWAY_API_GROUP}/v1`,
  `${GATEWAY_API_GROUP}/v1beta1`,
]);

/** Lists inside lists are flattened (kubectl does too), up to this depth. */
const MAX_LIST_DEPTH = 8;

export type Extracted =
  | {
      readonly kind: 'gateway';
      readonly node: YAMLMap;
      readonly apiVersion: string;
      /** Indices into `items` of the enclosing List(s); empty for a top-level Gateway. */
      readonly itemPath: readonly number[];
    }
  | { readonly kind: 'other' }
  | {
      readonly kind: 'notObject';
      readonly offset: number;
      readonly found: string;
      readonly itemPath: readonly number[];
    };

function deref(node: unknown, doc: Document.Parsed): unknown {
  return isAlias(node) ? node.resolve(doc) : node;
}

/** The value node of `key` in a map, without converting anything. */
function mapGet(map: YAMLMap, key: string, doc: Document.Parsed): unknown {
  for (const pair of map.items) {
    const k = pair.key;
    if (isScalar(k) && k.value === key) return deref(pair.value, doc);
  }
  return undefined;
}

function scalarStringAt(map: YAMLMap, key: string, doc: Document.Parsed): string | undefined {
  const node = mapGet(map, key, doc);
  return isScalar(node) && typeof node.value === 'string' ? node.value : undefined;
}

/** What a non-object node is, for the report: "a sequence", "a string", … */
function describeNode(node: unknown): string {
  if (isSeq(node)) return 'a sequence';
  if (isScalar(node)) {
    const v = node.value;
    if (v === null) return 'null';
    return typeof v === 'object' ? 'a scalar' : `a ${typeof v}`;
  }
  return 'not an object';
}

function startOf(node: unknown): number {
  return (node as Node | null)?.range?.[0] ?? 0;
}

/**
 * Walks one document root. `inherited` carries a typed list's apiVersion and
 * item kind (`GatewayList` items may omit both).
 */
export function extractObjects(root: Node, doc: Document.Parsed): Extracted[] {
  const out: Extracted[] = [];
  visit(root, [], undefined, 0);
  return out;

  function visit(
    node: unknown,
    itemPath: number[],
    inherited: { apiVersion?: string; kind?: string } | undefined,
    depth: number,
  ): void {
    node = deref(node, doc);
    if (!isMap(node)) {
      out.push({ kind: 'notObject', offset: startOf(node), found: describeNode(node), itemPath });
      return;
    }
    const map = node as YAMLMap;
    const apiVersion = scalarStringAt(map, 'apiVersion', doc) ?? inherited?.apiVersion;
    const kind = scalarStringAt(map, 'kind', doc) ?? inherited?.kind;
    if (kind === 'Gateway' && apiVersion !== undefined && GATEWAY_API_VERSIONS.has(apiVersion)) {
      out.push({ kind: 'gateway', node: map, apiVersion, itemPath });
      return;
    }
    if (kind !== undefined && kind.endsWith('List') && depth < MAX_LIST_DEPTH)
      if (visitList(map, { apiVersion, kind }, itemPath, depth)) return;
    out.push({ kind: 'other' });
  }

  /** A List's items, each visited; false when `items` is neither a sequence nor empty (not a list after all). */
  function visitList(
    map: YAMLMap,
    list: { apiVersion: string | undefined; kind: string },
    itemPath: number[],
    depth: number,
  ): boolean {
    const items = mapGet(map, 'items', doc);
    if (isSeq(items)) {
      const itemKind = list.kind === 'List' ? undefined : list.kind.slice(0, -'List'.length);
      const next = itemKind === undefined ? undefined : { apiVersion: list.apiVersion, kind: itemKind };
      items.items.forEach((item, i) => visit(item, [...itemPath, i], next, depth + 1));
      return true;
    }
    return items === undefined || (isScalar(items) && items.value === null); // an empty list
  }
}
