/**
 * Pruning of fields a custom resource's schema does not declare, as the
 * API server does it on the request body and again on the object a
 * mutating webhook returns (staging/src/k8s.io/apiextensions-apiserver
 * pkg/apiserver/customresource_handler.go, unstructuredSchemaCoercer.apply
 * → pkg/apiserver/schema/pruning/algorithm.go Prune): at the root
 * apiVersion, kind and metadata are kept; an object keeps only its
 * `properties` (or every key, each pruned by `additionalProperties`), an
 * array prunes each item by `items`, and `x-kubernetes-preserve-unknown-fields`
 * keeps what it has. So `routability` survives only on a patched CRD.
 */
import { isObj, type Obj } from './types.js';

type Schema = Obj;

function pruneValue(value: unknown, schema: Schema | undefined): unknown {
  if (schema === undefined) return value;
  if (Array.isArray(value)) {
    const items = isObj(schema['items']) ? schema['items'] : undefined;
    return value.map((v) => pruneValue(v, items));
  }
  if (!isObj(value)) return value;
  if (schema['x-kubernetes-preserve-unknown-fields'] === true && !isObj(schema['properties'])) return value;
  const props = isObj(schema['properties']) ? schema['properties'] : undefined;
  const additional = isObj(schema['additionalProperties']) ? schema['additionalProperties'] : undefined;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) {
    const sub = props && isObj(props[k]) ? props[k] : undefined;
    if (sub) out[k] = pruneValue(v, sub);
    else if (additional) out[k] = pruneValue(v, additional);
    else if (schema['x-kubernetes-preserve-unknown-fields'] === true) out[k] = v;
  }
  return out;
}

/** The openAPIV3Schema the CRD serves for `version`, or undefined (no CRD: nothing is pruned). */
export function schemaFor(crd: Obj | undefined, version: string): Schema | undefined {
  const spec = crd && isObj(crd['spec']) ? crd['spec'] : undefined;
  const versions = spec && Array.isArray(spec['versions']) ? (spec['versions'] as Obj[]) : [];
  const v = versions.find((x) => x['name'] === version);
  const schema = v && isObj(v['schema']) ? v['schema']['openAPIV3Schema'] : undefined;
  return isObj(schema) ? schema : undefined;
}

/** Prunes a custom resource object at its root. */
export function prune(object: Obj, schema: Schema | undefined): Obj {
  if (schema === undefined) return object;
  const { apiVersion, kind, metadata, ...rest } = object;
  const pruned = pruneValue(rest, schema) as Obj;
  return {
    ...(apiVersion !== undefined ? { apiVersion } : {}),
    ...(kind !== undefined ? { kind } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    ...pruned,
  };
}
