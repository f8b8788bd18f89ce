/**
 * The resource watch against a sick API server (the fake's faults): a watch
 * that gets no answer at all is given up after the start timeout, a restart waits at least
 * the Retry-After of a 429, and garbage answers keep the last objects — over
 * real HTTP. A watch left silent (replaced after its timeout and 15 s grace)
 * is in watch-grace.test.ts: it waits the grace out in real time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { restartDelay, type ResourceWatch } from '../../src/kube/watch.js';
import { FakeApiServer, serviceCidr } from '../kit/fake-apiserver.js';
import { eventually, startServiceCidrWatch } from '../kit/helpers.js';
import { KubeApiError } from '../../src/kube/errors.js';

let fake: FakeApiServer | undefined;
let watch: ResourceWatch<{ metadata?: { name?: string } }> | undefined;
afterEach(async () => {
  await watch?.stop();
  await fake?.close();
  watch = fake = undefined;
});

function start(backoff: Record<string, number>) {
  const started = startServiceCidrWatch(fake!.kubeconfigPath, {
    initialMs: 20,
    maxMs: 200,
    resetAfterMs: 10_000,
    absentRetryMs: 60_000,
    ...backoff,
  });
  watch = started.watch;
  return started;
}

const opened = () => fake!.watchesOpened.get('servicecidrs') ?? 0;

describe('the resource watch under API server faults', () => {
  it('a watch whose answer never starts fails after the start timeout, and the objects stay', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    fake.faults.add({ verbs: ['watch'] }, { kind: 'hang' }, { count: 1 });
    start({ watchTimeoutMs: 60_000, listTimeoutMs: 500 });
    await fake.until(() => opened() === 1, 'a watch after the hung one', 10_000);
    expect(fake.count({ verb: 'watch' })).toBe(2);
    expect(watch!.objects()).toHaveLength(1);
  });

  it('garbage answers to the relist keep the last objects', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    start({ listTimeoutMs: 2_000 });
    await fake.until(() => fake!.watcherCount('servicecidrs') === 1, 'the first watch');
    const bad = fake.faults.add({ verbs: ['list'] }, { kind: 'garbage' });
    fake.compact();
    fake.put('servicecidrs', serviceCidr('extra', ['10.100.0.0/16']));
    fake.dropConnections();
    await fake
      .until(() => bad.hits() >= 2, 'two bad lists', 10_000)
      .catch((err: unknown) => {
        throw new Error(`${String(err)}: ${JSON.stringify(fake!.requests.map((r) => [r.verb, r.query]))}`);
      });
    expect(watch!.objects()?.map((o) => o.metadata?.name)).toEqual(['kubernetes']);
    expect(watch!.lastError()).toBeDefined();
    expect(watch!.state()).toBe('restarting');
    bad.clear();
    await eventually(() => watch!.objects()?.length === 2, 'the good list', 10_000);
  });

  it('restart waits: doubling, ±20 %, capped, and never less than Retry-After', () => {
    const b = {
      initialMs: 500,
      maxMs: 15_000,
      resetAfterMs: 10_000,
      absentRetryMs: 60_000,
      listTimeoutMs: 1,
      watchTimeoutMs: 1,
    };
    for (let i = 0; i < 50; i++) {
      const first = restartDelay(b, 1, new Error('x'), Math.random);
      expect(first).toBeGreaterThanOrEqual(400);
      expect(first).toBeLessThanOrEqual(600);
      const capped = restartDelay(b, 20, new Error('x'), Math.random);
      expect(capped).toBeGreaterThanOrEqual(12_000);
      expect(capped).toBeLessThanOrEqual(18_000);
    }
    const throttled = new KubeApiError({ statusCode: 429, body: '', what: 'GET x', retryAfter: '7' });
    expect(restartDelay(b, 1, throttled, Math.random)).toBe(7_000);
    const forever = new KubeApiError({ statusCode: 503, body: '', what: 'GET x', retryAfter: '86400' });
    expect(restartDelay(b, 1, forever, Math.random)).toBe(300_000);
    const delays = new Set(Array.from({ length: 20 }, () => restartDelay(b, 3, new Error('x'), Math.random)));
    expect(delays.size).toBeGreaterThan(1);
  });
});
