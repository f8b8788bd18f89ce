/**
 * Bad answers to a resource watch, over real HTTP against the fake API
 * server: watch lines that are not JSON, cut off, not events or larger than
 * the cap, list bodies that are not lists, ERROR events and watches that end
 * at once. Each keeps the last objects, says what was wrong in the log,
 * counts it in routability_webhook_kube_bad_answers_total by reason, and
 * restarts with backoff — a server that answers every watch badly gets a few
 * requests, not a hot loop. The line reader holds at most the cap of one line.
 */
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import type { Registry } from 'prom-client';
import { BadAnswerError } from '../../src/kube/errors.js';
import { readWatchLines } from '../../src/kube/watch-lines.js';
import type { ResourceWatch } from '../../src/kube/watch.js';
import type { FaultAction, Verb } from '../kit/fault-injection.js';
import { FakeApiServer, serviceCidr } from '../kit/fake-apiserver.js';
import { eventually, startServiceCidrWatch, type LogLine } from '../kit/helpers.js';
import { sleep } from '../kit/eventually.js';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => {});
});

interface Started {
  readonly fake: FakeApiServer;
  readonly watch: ResourceWatch<{ metadata?: { name?: string } }>;
  readonly registry: Registry;
  readonly lines: LogLine[];
}

async function started(): Promise<Started> {
  const fake = await FakeApiServer.start();
  cleanups.push(() => fake.close());
  fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
  // Fast but real backoff: 50 ms doubling to 400 ms.
  const { watch, lines, registry } = startServiceCidrWatch(fake.kubeconfigPath, {
    initialMs: 50,
    maxMs: 400,
    resetAfterMs: 10_000,
    absentRetryMs: 60_000,
    listTimeoutMs: 5_000,
  });
  cleanups.unshift(() => watch.stop());
  await fake.until(() => fake.watcherCount('servicecidrs') === 1, 'the first watch');
  return { fake, watch, registry, lines };
}

async function badAnswers(registry: Registry, reason: string): Promise<number> {
  const metric = await registry.getSingleMetric('routability_webhook_kube_bad_answers_total')!.get();
  return metric.values.find((v) => v.labels['reason'] === reason && v.labels['resource'] === 'servicecidrs')
    ?.value as number;
}

const event = (type: string, object: unknown) => JSON.stringify({ type, object });

interface Case {
  readonly name: string;
  readonly verbs: readonly Verb[];
  readonly action: FaultAction;
  /** The reason counted, or undefined when it is not a bad answer (an error the server meant). */
  readonly reason: string | undefined;
  /** Said in the log. */
  readonly says: string;
}

const CASES: readonly Case[] = [
  {
    name: 'a watch line that is not JSON (a proxy page)',
    verbs: ['watch'],
    action: { kind: 'garbage' },
    reason: 'not-json',
    says: 'a watch line is not JSON: "<html>',
  },
  {
    name: 'a watch stream cut off inside an event',
    verbs: ['watch'],
    action: { kind: 'truncated' },
    reason: 'truncated',
    says: 'the stream ended inside an event',
  },
  {
    name: 'a watch line that is JSON but no event',
    verbs: ['watch'],
    action: { kind: 'lines', lines: [event('ADDED', 'not an object'), event('ADDED', { spec: {} })] },
    reason: 'not-an-event',
    says: 'is not an event',
  },
  {
    name: 'a watch event larger than the cap (9 MB)',
    verbs: ['watch'],
    action: { kind: 'oversized', bytes: 9_000_000 },
    reason: 'too-large',
    says: 'a watch event larger than 8388608 bytes',
  },
  {
    name: 'a list body that is JSON but not a list',
    verbs: ['list'],
    action: { kind: 'lines', lines: ['{"kind":"Status","apiVersion":"v1"}'] },
    reason: 'not-a-list',
    says: 'the list answer has no items array',
  },
  {
    name: 'an ERROR event other than 410',
    verbs: ['watch'],
    action: { kind: 'lines', lines: [event('ERROR', { kind: 'Status', code: 500, message: 'etcd is sad' })] },
    reason: undefined,
    says: 'HTTP 500',
  },
  {
    name: 'a watch that ends at once with no event',
    verbs: ['watch'],
    action: { kind: 'lines', lines: [] },
    reason: undefined,
    says: 'ended within 1 s with no event',
  },
];

// Each case has a fake and a watch of its own: they run side by side.
describe.concurrent('bad answers to a watch', () => {
  for (const c of CASES)
    it(`${c.name}: the objects stay, a log line and a metric, backoff (no hot loop)`, async () => {
      const { fake, watch, registry, lines } = await started();
      const since = performance.now();
      fake.faults.add({ resource: 'servicecidrs', verbs: c.verbs }, c.action);
      // A list fault needs a relist: the watch is dropped.
      fake.dropConnections();
      const said = (): LogLine[] => lines.filter((l) => String(l['err']).includes(c.says));
      await eventually(() => said().length > 0, `a log line saying ${c.says}`, 15_000);
      await sleep(1_000);
      const requests = fake.count({ resource: 'servicecidrs', since });
      const seconds = (performance.now() - since) / 1000;
      // Backoff 50 ms doubling to 400 ms allows ~5 restarts a second, each a list and a watch;
      // a restart without backoff makes hundreds.
      expect(requests).toBeGreaterThanOrEqual(2);
      expect(requests, `${requests} in ${seconds} s`).toBeLessThanOrEqual(10 + 10 * seconds);
      expect(watch.objects()?.map((o) => o.metadata?.name)).toEqual(['kubernetes']);
      expect(said()[0]!.msg).toBe('watch failed; keeping the last known objects and restarting');
      if (c.reason !== undefined) expect(await badAnswers(registry, c.reason)).toBeGreaterThan(0);
      // And once the server answers well again, the watch is back.
      fake.faults.clearAll();
      fake.put('servicecidrs', serviceCidr('later', ['10.200.0.0/16']));
      await fake.until(() => watch.objects()?.length === 2, 'the object added after the fault', 15_000);
    });

  it('holds at most the cap of one line, however long a line the server sends', async () => {
    const body = new PassThrough();
    let written = 0;
    let ended: unknown;
    readWatchLines(body, {
      maxLineBytes: 1024 * 1024,
      what: 'watch /x',
      onEvent: () => {},
      onEnd: (err) => (ended = err),
    });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    for (let i = 0; i < 100 && ended === undefined; i++) {
      body.write(chunk);
      written += chunk.length;
      await new Promise((r) => setImmediate(r));
    }
    expect(ended).toBeInstanceOf(BadAnswerError);
    expect((ended as BadAnswerError).reason).toBe('too-large');
    expect(written).toBeLessThanOrEqual(1024 * 1024 + 2 * chunk.length);
    expect(body.destroyed).toBe(true);
  });
});
