/**
 * The admission request as webhooks and CEL see it:
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go
 * (CreateV1AdmissionReview: uid, kind/resource/subResource as invoked,
 * requestKind/requestResource/requestSubResource as written, name,
 * namespace, operation, userInfo, object, oldObject (null on CREATE),
 * dryRun, options) and staging/src/k8s.io/apiserver/pkg/admission/plugin/cel
 * (CreateAdmissionRequest: the same fields for `request`; an empty
 * subResource is omitted, so `has(request.subResource)` is false on the
 * main resource).
 */
import { randomUUID } from 'node:crypto';
import { GROUP } from './rules.js';
import type { Obj, Write } from './types.js';

/** The object converted to `version`: a Gateway's versions share one schema, so only apiVersion changes. */
export function convertTo(object: Obj | undefined, version: string): Obj | undefined {
  if (object === undefined) return undefined;
  return { ...object, apiVersion: `${GROUP}/${version}` };
}

export interface Invocation {
  readonly write: Write;
  /** The version the hook or policy was invoked with (matchPolicy). */
  readonly version: string;
  /** The object at this point of admission (after earlier mutations). */
  readonly object: Obj;
  readonly oldObject?: Obj;
}

function optionsOf(write: Write) {
  const dryRun = write.dryRun ? { dryRun: ['All'] } : {};
  return write.operation === 'CREATE'
    ? { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions', ...dryRun }
    : { apiVersion: 'meta.k8s.io/v1', kind: 'UpdateOptions', ...dryRun };
}

/** The `request` of an AdmissionReview (and of CEL, which drops empty fields). */
export function admissionRequest(inv: Invocation, uid: string = randomUUID()) {
  const w = inv.write;
  const sub = w.subResource ?? '';
  const kind = (version: string) => ({ group: GROUP, version, kind: 'Gateway' });
  const resource = (version: string) => ({ group: GROUP, version, resource: 'gateways' });
  const requestVersion = w.version ?? 'v1';
  return {
    uid,
    kind: kind(inv.version),
    resource: resource(inv.version),
    ...(sub ? { subResource: sub } : {}),
    requestKind: kind(requestVersion),
    requestResource: resource(requestVersion),
    ...(sub ? { requestSubResource: sub } : {}),
    name: w.name,
    namespace: w.namespace,
    operation: w.operation,
    userInfo: w.userInfo ?? { username: 'system:anonymous' },
    object: convertTo(inv.object, inv.version),
    oldObject: convertTo(inv.oldObject, inv.version) ?? null,
    dryRun: w.dryRun === true,
    options: optionsOf(w),
  };
}

/** The variables a CEL expression of a webhook or policy reads (params and namespaceObject for policies). */
export function celBindings(inv: Invocation, extra: { params?: unknown; namespaceObject?: unknown } = {}) {
  const request = admissionRequest(inv, '');
  return {
    object: request.object,
    oldObject: request.oldObject,
    request,
    params: extra.params ?? null,
    namespaceObject: extra.namespaceObject ?? null,
  };
}
