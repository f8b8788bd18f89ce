/**
 * One tenant floods the allocated-IP lookups (dry-run Gateways with 16 fresh
 * addresses each) against an API server that answers each GET in 300 ms;
 * another tenant's Gateway asks for an IP a Service holds meanwhile. The
 * flood's own lookups may be answered unchecked (its share is used up); the
 * other tenant's is still looked up and denied, and the metrics say which
 * reviews went unchecked and why.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Requester } from '../../../src/inputs/allocations/ip-lookup-slots.js';
import { FakeApiServer, ipAddress, serviceCidr } from '../../kit/fake-apiserver.js';
import { decideWithAllocations, eventually, startSources, type Harness } from '../../kit/helpers.js';

let fake: FakeApiServer;
let h: Harness | undefined;

const MALLORY: Requester = { namespace: 'attack', user: 'mallory' };
const ALICE: Requester = { namespace: 'apps', user: 'alice' };

beforeEach(async () => {
  fake = await FakeApiServer.start();
  fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
  fake.put(
    'ipaddresses',
    ipAddress('10.96.0.10', { resource: 'services', namespace: 'kube-system', name: 'kube-dns' }),
  );
});

afterEach(async () => {
  await h?.sources.close();
  h = undefined;
  await fake.close();
});

/** A review's worth of fresh addresses: 16, none held, none asked before. */
const fresh = (review: number) => Array.from({ length: 16 }, (_, i) => `10.96.${10 + review}.${i + 1}`);

function metricValue(text: string, line: string): number {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? 0 : Number(found.slice(line.length + 1));
}

describe('a flood of allocated-IP lookups from one tenant', () => {
  it("leaves the flood's own reviews unchecked, and still denies another tenant's held IP", async () => {
    // The defaults: 1 s per lookup, 4 GETs at once, 64 waiting, 16 per namespace and per user.
    h = await startSources(['--kubeconfig', fake.kubeconfigPath]);
    const source = h.sources.allocatedIPs!;
    await eventually(() => h!.sources.ranges.readiness().ready, 'ranges ready');
    await eventually(
      () => (h!.sources.ranges.describe() as { allocatedIPs: { state: string } }).allocatedIPs.state === 'ok',
      'the start-up probe',
    );
    fake.faults.add({ resource: 'ipaddresses', verbs: ['get'] }, { kind: 'delay', ms: 300 });

    // Eight dry-run Gateways at once from one user and namespace: 128 lookups for 4 slots.
    const flood = Array.from({ length: 8 }, (_, r) => source.lookup(fresh(r), MALLORY));
    // A moment later, while the queue is full, another tenant's Gateway.
    await new Promise((r) => setTimeout(r, 20));
    const denied = await decideWithAllocations(
      h,
      '10.96.0.10',
      'Cluster',
      { namespace: 'apps', name: 'web' },
      ALICE,
    );
    expect(denied.allowed).toBe(false);
    expect(denied.message).toBe(
      'spec.addresses[0].value: Invalid value: "10.96.0.10": already allocated to services/kube-system/kube-dns',
    );

    const answers = await Promise.all(flood);
    const reasons = answers.flatMap((a, r) => fresh(r).map((ip) => a.uncheckedReason?.(ip)));
    const unchecked = reasons.filter((x) => x !== undefined);
    // The flood's share was used up: beyond its 16 waiting, its lookups were refused at once; of the
    // waiting ones, those still without a slot after 1 s were given up (4 GETs of 300 ms at a time).
    expect(unchecked.length).toBeGreaterThan(64);
    const byReason = new Map<string, number>();
    for (const r of unchecked) byReason.set(r!, (byReason.get(r!) ?? 0) + 1);
    process.stderr.write(
      `lookup flood: ${128 - unchecked.length} of 128 checked; ${JSON.stringify([...byReason])}\n`,
    );
    expect([...byReason.keys()].sort()).toEqual(
      expect.arrayContaining(['too many allocated-IP lookups waiting for this namespace']) as unknown,
    );
    for (const reason of byReason.keys())
      expect([
        'too many allocated-IP lookups waiting for this namespace',
        'no answer from the API server within 1 s',
      ]).toContain(reason);
    // The refusals were this server's, not the API server's: the check stays on.
    expect(source.describe()).toMatchObject({ state: 'ok' });

    const text = await h.registry.metrics();
    const count = (reason: string) =>
      metricValue(text, `routability_webhook_allocated_ip_unchecked_reviews_total{reason="${reason}"}`);
    // The first review got 4 slots and 12 places in the queue, the second the last 4 places of the
    // namespace's 16: from its 5th address on, and for the six after it, the share was used up.
    expect(count('namespace-share')).toBe(7);
    for (const reason of ['api-error', 'api-unavailable', 'queue-full', 'pushed-out', 'review-limit'])
      expect(count(reason), reason).toBe(0);
  }, 30_000);
});
