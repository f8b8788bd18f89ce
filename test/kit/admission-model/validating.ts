/**
 * The ValidatingAdmissionWebhook plugin
 * (staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/validating/dispatcher.go):
 * every matching entry is called (in parallel there; in order here, which
 * changes nothing but which refusal is reported first: the API server
 * reports the first error it collects), none can change the object, and
 * any refusal or closed failure refuses the write.
 */
import { callHook, type HookContext } from './call-hook.js';
import { entriesOf, shouldCallHook } from './should-call.js';
import { Refused, type Obj, type Refusal, type Write } from './types.js';

export async function validateWithWebhooks(write: Write, object: Obj, ctx: HookContext): Promise<void> {
  const base = { write, object, ...(write.oldObject ? { oldObject: write.oldObject } : {}) };
  const calls: Promise<void>[] = [];
  // Selection errors (a matchCondition error under Fail, a missing namespace) stop the dispatch before any call.
  for (const entry of entriesOf(ctx.cluster.validatingWebhooks)) {
    const version = shouldCallHook(entry, ctx.cluster, base, ctx.rec);
    if (version === undefined) continue;
    calls.push(callHook(entry, { ...base, version }, ctx).then(() => undefined));
  }
  const outcomes = await Promise.allSettled(calls);
  const refusals: Refusal[] = [];
  for (const o of outcomes) {
    if (o.status === 'fulfilled') continue;
    if (o.reason instanceof Refused) refusals.push(o.reason.refusal);
    else throw o.reason;
  }
  if (refusals.length > 0) throw new Refused(refusals[0]!);
}
