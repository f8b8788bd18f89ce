/**
 * What the registry does to a Gateway between mutating and validating
 * admission (staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go:
 * Create and Update call BeforeCreate/BeforeUpdate after the handler ran
 * mutating admission — endpoints/handlers/create.go, update.go — and before
 * the validating admission they are given), with the custom resource
 * strategies of staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource
 * (strategy.go, status_strategy.go): a CREATE drops status; an UPDATE of the
 * main resource keeps the stored status; an UPDATE of status keeps the
 * stored spec and metadata and takes only the new status. So a mutating
 * patch to spec on a status write is discarded, and validation sees the
 * stored spec with the new status.
 */
import type { Obj, Write } from './types.js';

export function prepareForStorage(write: Write, object: Obj): Obj {
  const { status, ...rest } = object;
  if (write.operation === 'CREATE') return rest;
  const old = write.oldObject ?? {};
  if (write.subResource === 'status') {
    const { status: _oldStatus, ...oldRest } = old;
    return { ...oldRest, ...(status !== undefined ? { status } : {}) };
  }
  return { ...rest, ...(old['status'] !== undefined ? { status: old['status'] } : {}) };
}
