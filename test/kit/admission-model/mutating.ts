/**
 * The MutatingAdmissionWebhook plugin: every entry in order
 * (staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go),
 * each seeing the object the ones before it produced. A JSON patch that
 * changes the object marks every earlier entry with reinvocationPolicy
 * IfNeeded for a second round (mutating/reinvocationcontext.go); the
 * admission chain runs the plugin once more when that happened
 * (staging/src/k8s.io/apiserver/pkg/admission/reinvocation.go), and in that
 * round only the marked entries are called — never one that was skipped in
 * the first. After the patches the custom resource is pruned to its schema
 * (pruning.ts).
 */
import { callHook, type HookContext } from './call-hook.js';
import { applyPatch, type PatchOp } from './json-patch.js';
import { prune, schemaFor } from './pruning.js';
import { convertTo } from './request.js';
import { entriesOf, shouldCallHook, type WebhookEntry } from './should-call.js';
import { refuse, type Obj, type Write } from './types.js';

interface Round {
  object: Obj;
  changed: boolean;
  /** IfNeeded entries called since the last change. */
  readonly invokedSinceChange: Set<string>;
  /** Entries to call again in the second round. */
  readonly reinvoke: Set<string>;
}

function patched(
  entry: WebhookEntry,
  object: Obj,
  patch: string | undefined,
  patchType: string | undefined,
): Obj {
  if (patch === undefined || patch === '') return object;
  if (patchType !== 'JSONPatch')
    refuse(entry.name, 500, 'InternalError', `unsupported patch type "${patchType}"`);
  let ops: PatchOp[];
  try {
    ops = JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as PatchOp[];
  } catch (err) {
    return refuse(
      entry.name,
      500,
      'InternalError',
      `received undecodable patch in webhook response: ${String(err)}`,
    );
  }
  try {
    return applyPatch(object, ops);
  } catch (err) {
    return refuse(entry.name, 500, 'InternalError', `Internal error occurred: ${(err as Error).message}`);
  }
}

async function runRound(write: Write, ctx: HookContext, round: Round, second: boolean): Promise<void> {
  for (const entry of entriesOf(ctx.cluster.mutatingWebhooks)) {
    const base = { write, object: round.object, ...(write.oldObject ? { oldObject: write.oldObject } : {}) };
    const version = shouldCallHook(entry, ctx.cluster, base, ctx.rec);
    if (version === undefined) continue;
    if (second && !round.reinvoke.has(entry.name)) {
      ctx.rec.note(`${entry.name}: not reinvoked`);
      continue;
    }
    const answer = await callHook(entry, { ...base, version }, ctx);
    if (answer) {
      const before = JSON.stringify(round.object);
      const inVersion = convertTo(round.object, version)!;
      const after = convertTo(
        patched(entry, inVersion, answer.patch, answer.patchType),
        write.version ?? 'v1',
      )!;
      if (JSON.stringify(after) !== before) {
        round.object = after;
        round.changed = true;
        for (const name of round.invokedSinceChange) round.reinvoke.add(name);
        round.invokedSinceChange.clear();
      }
    }
    if (entry.reinvocationPolicy === 'IfNeeded') round.invokedSinceChange.add(entry.name);
  }
}

/** The object after every mutating webhook, pruned to the CRD's schema. Throws Refused. */
export async function mutate(write: Write, object: Obj, ctx: HookContext): Promise<Obj> {
  const round: Round = { object, changed: false, invokedSinceChange: new Set(), reinvoke: new Set() };
  await runRound(write, ctx, round, false);
  if (round.changed && round.reinvoke.size > 0) {
    ctx.rec.note('mutating webhooks: second round');
    round.changed = false;
    await runRound(write, ctx, round, true);
  }
  return prune(round.object, schemaFor(ctx.cluster.gatewayCrd, write.version ?? 'v1'));
}
