/**
 * The API server's admission of one Gateway write, in the order of
 * kube-apiserver's admission chain (pkg/kubeapiserver/options/plugins.go
 * AllOrderedPlugins: NamespaceLifecycle … MutatingAdmissionWebhook,
 * ValidatingAdmissionPolicy, ValidatingAdmissionWebhook; the chain stops at
 * the first plugin that refuses — staging/src/k8s.io/apiserver/pkg/admission/chain.go):
 *
 * 1. NamespaceLifecycle: a write into a namespace that does not exist is refused.
 * 2. The request body is pruned to the CRD's schema (pruning.ts).
 * 3. Mutating webhooks (mutating.ts), then pruning again.
 * 4. The registry's strategy (strategy.ts).
 * 5. ValidatingAdmissionPolicies (policy-dispatch.ts).
 * 6. Validating webhooks (validating.ts).
 */
import type { Cluster } from './cluster.js';
import { mutate } from './mutating.js';
import { validateWithPolicies } from './policy-dispatch.js';
import { prune, schemaFor } from './pruning.js';
import { prepareForStorage } from './strategy.js';
import { Recorder, Refused, type Obj, type Verdict, type Write } from './types.js';
import { validateWithWebhooks } from './validating.js';

export interface AdmitOptions {
  /** Scales webhook deadlines (timeoutSeconds); 1 unless said. */
  readonly timeScale?: number;
}

async function run(cluster: Cluster, write: Write, rec: Recorder, timeScale: number): Promise<Obj> {
  if (!cluster.namespaces.has(write.namespace)) {
    rec.note('NamespaceLifecycle: namespace not found');
    throw new Refused({
      by: 'NamespaceLifecycle',
      code: 404,
      reason: 'NotFound',
      message: `namespaces "${write.namespace}" not found`,
    });
  }
  const schema = schemaFor(cluster.gatewayCrd, write.version ?? 'v1');
  const ctx = { cluster, rec, timeScale };
  const mutated = await mutate(write, prune(write.object, schema), ctx);
  const stored = prepareForStorage(write, mutated);
  validateWithPolicies(cluster, write, stored, rec);
  await validateWithWebhooks(write, stored, ctx);
  return stored;
}

export async function admit(cluster: Cluster, write: Write, options: AdmitOptions = {}): Promise<Verdict> {
  const rec = new Recorder();
  try {
    const object = await run(cluster, write, rec, options.timeScale ?? 1);
    return {
      allowed: true,
      warnings: rec.warnings,
      auditAnnotations: rec.auditAnnotations,
      object,
      trace: rec.trace,
    };
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    return {
      allowed: false,
      refusal: err.refusal,
      warnings: rec.warnings,
      auditAnnotations: rec.auditAnnotations,
      object: write.object,
      trace: rec.trace,
    };
  }
}
