/**
 * Calling one webhook entry and sorting the outcome as both dispatchers do
 * (webhook/validating/dispatcher.go callHook, webhook/mutating/dispatcher.go
 * callAttrMutatingHook): on a dryRun write an entry whose sideEffects is not
 * None or NoneOnDryRun is refused without a call (NewDryRunUnsupportedErr,
 * whatever the failurePolicy); a call error fails open under failurePolicy
 * Ignore and closed (500, "failed calling webhook") otherwise; an answer
 * allowed: false refuses with its status (webhook/errors/statuserror.go
 * ToStatusErr: `admission webhook "<name>" denied the request: <message>`).
 * Warnings and audit annotations (`<name>/<key>`) of an answer are kept.
 */
import type { Cluster } from './cluster.js';
import { admissionRequest, type Invocation } from './request.js';
import type { WebhookEntry } from './should-call.js';
import { refuse, type Recorder } from './types.js';
import { callWebhook, type AdmissionAnswer } from './webhook-client.js';

export interface HookContext {
  readonly cluster: Cluster;
  readonly rec: Recorder;
  readonly timeScale: number;
}

/** The answer of an entry that allowed the write, or undefined when the call failed open. Throws Refused. */
export async function callHook(
  entry: WebhookEntry,
  inv: Invocation,
  ctx: HookContext,
): Promise<AdmissionAnswer | undefined> {
  if (inv.write.dryRun && entry.sideEffects !== 'None' && entry.sideEffects !== 'NoneOnDryRun')
    refuse(entry.name, 400, 'BadRequest', `admission webhook "${entry.name}" does not support dry run`);
  const service = entry.clientConfig.service;
  const backend = service
    ? ctx.cluster.backendOf(service.namespace, service.name)
    : { kind: 'no-endpoints' as const };
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: admissionRequest(inv),
  };
  const result = await callWebhook(review, {
    clientConfig: entry.clientConfig,
    timeoutSeconds: entry.timeoutSeconds,
    backend,
    timeScale: ctx.timeScale,
  });
  if (result.kind === 'call-error') {
    if (entry.failurePolicy === 'Ignore') {
      ctx.rec.note(`${entry.name}: failed open (${result.reason})`);
      return undefined;
    }
    ctx.rec.note(`${entry.name}: failed closed (${result.reason})`);
    refuse(
      entry.name,
      500,
      'InternalError',
      `Internal error occurred: failed calling webhook "${entry.name}": ${result.reason}`,
    );
  }
  const answer = result.answer;
  for (const w of answer.warnings ?? []) ctx.rec.warnings.push(w);
  for (const [k, v] of Object.entries(answer.auditAnnotations ?? {}))
    ctx.rec.auditAnnotations[`${entry.name}/${k}`] = v;
  if (!answer.allowed) {
    const message = answer.status?.message ?? '';
    ctx.rec.note(`${entry.name}: denied`);
    refuse(
      entry.name,
      answer.status?.code ?? 400,
      answer.status?.reason ?? '',
      `admission webhook "${entry.name}" denied the request${message ? `: ${message}` : ' without explanation'}`,
    );
  }
  ctx.rec.note(`${entry.name}: allowed`);
  return answer;
}
