/**
 * Finds where a field lives in the source: walks the syntax tree along a
 * FieldPath's segments and returns the offset of that node, or of the nearest
 * ancestor that exists when the field itself is absent. Called only for
 * findings, so clean Gateways cost nothing here.
 */
import { isAlias, isMap, isScalar, isSeq, type Document, type Node } from 'yaml';

function deref(node: unknown, doc: Document.Parsed): unknown {
  return isAlias(node) ? node.resolve(doc) : node;
}

/**
 * Where a map entry is shown: its value when that is a scalar written out on
 * the line (`value: 10.0.0.5` → the value), else its key (`spec:` above a block).
 */
function entryOffset(key: Node, value: unknown): number {
  if (isScalar(value) && value.range && value.range[1] > value.range[0]) return value.range[0];
  return key.range?.[0] ?? 0;
}

export function locateField(
  root: Node,
  segments: readonly (string | number)[],
  doc: Document.Parsed,
): number {
  let node: unknown = root;
  let offset = root.range?.[0] ?? 0;
  for (const segment of segments) {
    node = deref(node, doc);
    if (typeof segment === 'number' && isSeq(node)) {
      const item: unknown = node.items[segment];
      if (item === undefined) break;
      node = item;
      offset = (item as Node | null)?.range?.[0] ?? offset;
    } else if (typeof segment === 'string' && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === segment);
      if (pair === undefined) break;
      node = pair.value;
      offset = entryOffset(pair.key as Node, pair.value);
    } else {
      break;
    }
  }
  return offset;
}
