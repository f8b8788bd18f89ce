/**
 * Whether the API server calls one webhook entry for a write, in the order
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/generic/webhook.go
 * ShouldCallHook checks it: namespaceSelector against the namespace's labels
 * (predicates/namespace/matcher.go), objectSelector against the labels of
 * the object or the old object (predicates/object/matcher.go), the rules
 * with matchPolicy (predicates/rules/rules.go), then matchConditions
 * (matchconditions/matcher.go). A namespace that cannot be read is an error
 * only when the rules match.
 */
import type { Cluster } from './cluster.js';
import { labelsOf, selectorMatches } from './label-selector.js';
import { evaluateMatchConditions, type MatchCondition } from './match-conditions.js';
import { celBindings, type Invocation } from './request.js';
import { matchedVersion, type Rule } from './rules.js';
import { refuse, type Obj, type Recorder, type Write } from './types.js';
import type { ClientConfig } from './webhook-client.js';

/** One entry of a Mutating- or ValidatingWebhookConfiguration. */
export interface WebhookEntry {
  readonly name: string;
  readonly rules?: readonly Rule[];
  readonly matchPolicy?: string;
  readonly namespaceSelector?: unknown;
  readonly objectSelector?: unknown;
  readonly matchConditions?: readonly MatchCondition[];
  readonly failurePolicy?: string;
  readonly timeoutSeconds?: number;
  readonly sideEffects?: string;
  readonly reinvocationPolicy?: string;
  readonly clientConfig: ClientConfig;
}

/** The entries of every configuration of one kind, configurations by name, entries in order. */
export function entriesOf(configs: ReadonlyMap<string, Obj>): WebhookEntry[] {
  return [...configs.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([, c]) => (Array.isArray(c['webhooks']) ? (c['webhooks'] as WebhookEntry[]) : []));
}

/** The version the entry is invoked with, or undefined when it is not called. Throws Refused on an error. */
export function shouldCallHook(
  entry: WebhookEntry,
  cluster: Cluster,
  inv: Omit<Invocation, 'version'>,
  rec: Recorder,
): string | undefined {
  const write: Write = inv.write;
  const nsLabels = cluster.namespaces.get(write.namespace);
  const nsMatches = nsLabels === undefined ? undefined : selectorMatches(entry.namespaceSelector, nsLabels);
  if (nsMatches === false) return skip(rec, entry, 'namespaceSelector');
  const objectMatches =
    selectorMatches(entry.objectSelector, labelsOf(inv.object)) ||
    (inv.oldObject !== undefined && selectorMatches(entry.objectSelector, labelsOf(inv.oldObject)));
  if (!objectMatches) return skip(rec, entry, 'objectSelector');
  const version = matchedVersion(entry.rules ?? [], entry.matchPolicy, write);
  if (version === undefined) return skip(rec, entry, 'rules');
  if (nsMatches === undefined)
    refuse('namespace', 404, 'NotFound', `namespaces "${write.namespace}" not found`);
  const outcome = evaluateMatchConditions(
    entry.matchConditions,
    celBindings({ ...inv, version }),
    entry.failurePolicy,
  );
  if (outcome.kind === 'error')
    refuse(
      entry.name,
      403,
      'Forbidden',
      `gateways.gateway.networking.k8s.io "${write.name}" is forbidden: ${outcome.message}`,
    );
  if (outcome.kind === 'skip')
    return skip(
      rec,
      entry,
      `matchConditions${outcome.failedCondition ? ` (${outcome.failedCondition})` : ''}`,
    );
  return version;
}

function skip(rec: Recorder, entry: WebhookEntry, why: string): undefined {
  rec.note(`${entry.name}: not called (${why})`);
  return undefined;
}
