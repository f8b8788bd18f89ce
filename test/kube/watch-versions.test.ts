/**
 * The resource watcher's own state machine (src/kube/watch.ts) against the
 * fake API server, in process: the fallback through API versions on 404
 * before any list, "absent" when none is served (said once, looked at again),
 * restarts with their log lines, counts and metrics, the health it reports,
 * the field selector on every list and watch, one onChange per list, and
 * stop(). The watch's bad answers and timeouts are in watch-bad-answers and
 * watch-timeouts.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { kubeClient } from '../../src/kube/client.js';
import { loadKubeconfig } from '../../src/kube/kubeconfig.js';
import {
  listOf,
  listResource,
  startResourceWatch,
  type BackoffOptions,
  type ResourceWatch,
} from '../../src/kube/watch.js';
import { FakeApiServer, serviceCidr } from '../kit/fake-apiserver.js';
import { capturingLogger, eventually, type LogLine } from '../kit/helpers.js';

type Obj = { metadata?: { name?: string } };

let fake: FakeApiServer | undefined;
let watch: ResourceWatch<Obj> | undefined;
afterEach(async () => {
  await watch?.stop();
  await fake?.close();
  watch = fake = undefined;
});

interface Started {
  readonly watch: ResourceWatch<Obj>;
  readonly lines: LogLine[];
  readonly registry: Registry;
  readonly changes: () => number;
  readonly absents: () => number;
}

function start(
  opts: {
    backoff?: Partial<BackoffOptions>;
    fieldSelector?: string;
    versions?: string[];
    withoutOnAbsent?: boolean;
  } = {},
): Started {
  const { logger, lines } = capturingLogger();
  const registry = new Registry();
  const metrics = {
    watchRestarts: new Counter({
      name: 'restarts',
      help: 'h',
      labelNames: ['resource'] as const,
      registers: [registry],
    }),
    badAnswers: new Counter({
      name: 'bad',
      help: 'h',
      labelNames: ['resource', 'reason'] as const,
      registers: [registry],
    }),
    lastSync: new Gauge({
      name: 'sync',
      help: 'h',
      labelNames: ['resource'] as const,
      registers: [registry],
    }),
  };
  let changes = 0;
  let absents = 0;
  const started = startResourceWatch<Obj>({
    client: kubeClient(loadKubeconfig({ kubeconfig: fake!.kubeconfigPath, env: {} }).kc),
    group: 'networking.k8s.io',
    resource: 'servicecidrs',
    versions: opts.versions ?? ['v1', 'v1beta1'],
    ...(opts.fieldSelector === undefined ? {} : { fieldSelector: opts.fieldSelector }),
    onChange: () => changes++,
    ...(opts.withoutOnAbsent ? {} : { onAbsent: () => absents++ }),
    logger,
    metrics,
    random: () => 0.5,
    backoff: {
      initialMs: 50,
      maxMs: 400,
      resetAfterMs: 10_000,
      absentRetryMs: 60_000,
      listTimeoutMs: 5_000,
      ...opts.backoff,
    },
  });
  watch = started;
  return { watch: started, lines, registry, changes: () => changes, absents: () => absents };
}

async function metric(registry: Registry, name: string): Promise<number | undefined> {
  const values = (await registry.getSingleMetric(name)!.get()).values;
  return values.find((v) => v.labels['resource'] === 'servicecidrs')?.value;
}

const msgs = (lines: LogLine[]) => lines.map((l) => l.msg);

describe('the resource watcher', () => {
  it('falls back to the next version on a 404 before any list, and reports it in health()', async () => {
    fake = await FakeApiServer.start();
    fake.serveVersions('servicecidrs', ['v1beta1']);
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    const s = start();
    expect(s.watch.state()).toBe('starting');
    expect(s.watch.apiVersion()).toBeUndefined();
    expect(s.watch.objects()).toBeUndefined();
    expect(s.watch.get('kubernetes')).toBeUndefined();
    expect(s.watch.health()).toEqual({
      resource: 'servicecidrs.networking.k8s.io',
      apiVersion: undefined,
      state: 'starting',
      restarts: 0,
    });
    // Present (at 0) before any restart.
    expect(await metric(s.registry, 'restarts')).toBe(0);
    await eventually(() => s.watch.state() === 'synced', 'synced on v1beta1');
    expect(s.watch.apiVersion()).toBe('networking.k8s.io/v1beta1');
    expect(s.watch.get('kubernetes')?.metadata?.name).toBe('kubernetes');
    expect(s.watch.get('other')).toBeUndefined();
    expect(s.lines.find((l) => l.msg === 'API version not served (404); trying the next one')).toMatchObject({
      level: 30,
      resource: 'servicecidrs.networking.k8s.io',
      apiVersion: 'networking.k8s.io/v1',
      next: 'networking.k8s.io/v1beta1',
    });
    expect(s.lines.find((l) => l.msg === 'watch synced')).toMatchObject({
      level: 30,
      apiVersion: 'networking.k8s.io/v1beta1',
      objects: 1,
    });
    const health = s.watch.health();
    expect(health).toEqual({
      resource: 'servicecidrs.networking.k8s.io',
      apiVersion: 'networking.k8s.io/v1beta1',
      state: 'synced',
      restarts: 0,
      lastSyncAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as unknown,
      objects: 1,
    });
    expect(Math.abs(Date.parse(health.lastSyncAt!) - Date.now())).toBeLessThan(5_000);
    expect(Math.abs((await metric(s.registry, 'sync'))! - Date.now() / 1000)).toBeLessThan(5);
    expect(s.absents()).toBe(0);
  });

  it('absent when no version is served: said once, looked at again, and synced once served', async () => {
    fake = await FakeApiServer.start();
    fake.serveVersions('servicecidrs', []);
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    const s = start({ backoff: { absentRetryMs: 300 } });
    await eventually(() => s.watch.state() === 'absent', 'absent');
    const text = 'none of networking.k8s.io/v1, networking.k8s.io/v1beta1 is served (404)';
    expect(s.watch.lastError()).toBe(text);
    expect(s.absents()).toBe(1);
    const health = s.watch.health();
    expect(health).toMatchObject({ state: 'absent', lastError: text, apiVersion: undefined });
    expect(health.nextRetryInMs).toBeGreaterThan(0);
    expect(health.nextRetryInMs).toBeLessThanOrEqual(300);
    expect(health).not.toHaveProperty('objects');
    // Looked at again from v1, and the second time it is only a debug line.
    await eventually(() => s.lines.some((l) => l.msg === 'API still not served'), 'the second look');
    expect(s.lines.find((l) => l.msg === 'API still not served')).toMatchObject({ level: 20, err: text });
    expect(s.absents()).toBe(1);
    expect(fake.requests.filter((r) => r.path.includes('/v1/servicecidrs')).length).toBeGreaterThanOrEqual(2);
    fake.serveVersions('servicecidrs', ['v1']);
    await eventually(() => s.watch.state() === 'synced', 'synced once served', 3_000);
    expect(s.watch.apiVersion()).toBe('networking.k8s.io/v1');
    expect(s.watch.lastError()).toBeUndefined();
    expect(s.watch.health()).not.toHaveProperty('nextRetryInMs');
    expect(s.watch.health()).not.toHaveProperty('lastError');
    // Not a restart: the absent API is looked at again, not restarted.
    expect(s.watch.health().restarts).toBe(0);
  });

  it('one version, not served: absent at once, with that version named (no onAbsent needed)', async () => {
    fake = await FakeApiServer.start();
    fake.serveVersions('servicecidrs', ['v1beta1']);
    const s = start({ versions: ['v1'], withoutOnAbsent: true });
    await eventually(() => s.watch.state() === 'absent', 'absent');
    expect(s.watch.lastError()).toBe('none of networking.k8s.io/v1 is served (404)');
    expect(s.watch.health().nextRetryInMs).toBeGreaterThan(0);
    expect(msgs(s.lines)).not.toContain('API version not served (404); trying the next one');
  });

  it('a failed first list: "list failed", still starting, failures counted, then a restart', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    fake.failLists('servicecidrs', 2, 503);
    const s = start();
    await eventually(
      () => s.lines.filter((l) => l.msg === 'list failed; retrying').length === 1,
      'one failure',
    );
    expect(s.watch.state()).toBe('starting');
    expect(s.watch.lastError()).toMatch(/^HTTP 503/);
    await eventually(() => s.watch.state() === 'synced', 'synced after two failures');
    const failed = s.lines.filter((l) => l.msg === 'list failed; retrying');
    // random 0.5: no jitter (0.8 + 0.4 × 0.5 = 1): 50 ms, then 100 ms.
    expect(failed.map((l) => [l.level, l['failures'], l['retryInMs'], l['apiVersion']])).toEqual([
      [40, 1, 50, 'networking.k8s.io/v1'],
      [40, 2, 100, 'networking.k8s.io/v1'],
    ]);
    expect(s.watch.health().restarts).toBe(2);
    expect(await metric(s.registry, 'restarts')).toBe(2);
    // An HTTP error is no bad answer: that counter stays without a series.
    expect((await s.registry.getSingleMetric('bad')!.get()).values).toEqual([]);
    expect(s.watch.lastError()).toBeUndefined();
    expect(s.lines.filter((l) => l.msg === 'watch synced')).toHaveLength(1);
  });

  it('a failure after a list keeps the objects: "watch failed", restarting, and counts from 1 again after resetAfterMs', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    const s = start({ backoff: { resetAfterMs: 0 } });
    await eventually(() => s.watch.state() === 'synced', 'synced');
    fake.failLists('servicecidrs', 2, 500);
    fake.goneOnNextWatch('servicecidrs', 'status');
    fake.dropWatches('servicecidrs');
    await eventually(() => s.watch.state() === 'restarting', 'restarting');
    expect(s.watch.objects()?.map((o) => o.metadata?.name)).toEqual(['kubernetes']);
    expect(s.watch.health()).toMatchObject({ state: 'restarting', objects: 1 });
    await eventually(() => s.watch.state() === 'synced', 'synced again', 3_000);
    const failed = s.lines.filter(
      (l) => l.msg === 'watch failed; keeping the last known objects and restarting',
    );
    expect(failed.length).toBeGreaterThanOrEqual(2);
    // resetAfterMs 0: every failure is the first of its run.
    expect(failed.map((l) => l['failures'])).toEqual(failed.map(() => 1));
    expect(s.lines.filter((l) => l.msg === 'watch synced')).toHaveLength(2);
  });

  it('a relist after a 410 is not a restart: no log line, no count', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    const s = start();
    await fake.until(() => fake!.watcherCount('servicecidrs') === 1, 'the watch');
    // An event first: a watch that ends within a second without one is an error (a restart).
    fake.put('servicecidrs', serviceCidr('other', ['10.100.0.0/16']));
    await eventually(() => s.watch.objects()?.length === 2, 'the event');
    const lists = fake.listCount('servicecidrs');
    fake.goneOnNextWatch('servicecidrs', 'event');
    fake.endWatches('servicecidrs');
    await eventually(() => fake!.listCount('servicecidrs') > lists, 'the relist');
    await fake.until(() => fake!.watcherCount('servicecidrs') === 1, 'the watch after it');
    expect(s.lines.filter((l) => l.msg === 'watch synced')).toHaveLength(1);
    expect(s.watch.health()).toMatchObject({ state: 'synced', restarts: 0 });
  });

  it('a 404 after a list is a failure like any other: the objects stay, never absent', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    const s = start();
    await fake.until(() => fake!.watcherCount('servicecidrs') === 1, 'the watch');
    const states = new Set<string>();
    const timer = setInterval(() => states.add(s.watch.state()), 5);
    fake.serveVersions('servicecidrs', []);
    fake.dropWatches('servicecidrs');
    await eventually(() => s.watch.health().restarts >= 2, 'two restarts');
    clearInterval(timer);
    expect(states.has('absent')).toBe(false);
    expect(s.absents()).toBe(0);
    expect(s.watch.state()).toBe('restarting');
    expect(s.watch.lastError()).toMatch(/^HTTP 404/);
    expect(s.watch.apiVersion()).toBe('networking.k8s.io/v1');
    expect(s.watch.objects()?.map((o) => o.metadata?.name)).toEqual(['kubernetes']);
  });

  it('sends the field selector with every list and watch', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    fake.put('servicecidrs', serviceCidr('other', ['10.100.0.0/16']));
    const s = start({ fieldSelector: 'metadata.name=kubernetes' });
    await fake.until(() => fake!.watcherCount('servicecidrs') === 1, 'the watch');
    expect(s.watch.objects()?.map((o) => o.metadata?.name)).toEqual(['kubernetes']);
    const asked = fake.requests.filter((r) => r.path.endsWith('/servicecidrs'));
    expect(asked.length).toBeGreaterThanOrEqual(2);
    for (const r of asked) expect(r.query['fieldSelector']).toBe('metadata.name=kubernetes');
  });

  it('one onChange per list, one per event, none after stop()', async () => {
    fake = await FakeApiServer.start();
    for (const n of ['a', 'b', 'c']) fake.put('servicecidrs', serviceCidr(n, ['10.96.0.0/12']));
    const s = start();
    await fake.until(() => fake!.watcherCount('servicecidrs') === 1, 'the watch');
    await eventually(() => s.changes() === 1, 'the list');
    await new Promise((r) => setTimeout(r, 50));
    expect(s.changes()).toBe(1);
    fake.put('servicecidrs', serviceCidr('d', ['10.96.0.0/12']));
    await eventually(() => s.changes() === 2, 'the event');
    await s.watch.stop();
    expect(s.watch.state()).toBe('stopped');
    fake.put('servicecidrs', serviceCidr('e', ['10.96.0.0/12']));
    await new Promise((r) => setTimeout(r, 100));
    expect(s.changes()).toBe(2);
    expect(fake.watcherCount('servicecidrs')).toBe(0);
  });
});

describe('listOf and listResource', () => {
  it('keeps the items that are objects and a string resourceVersion', () => {
    expect(listOf({ metadata: { resourceVersion: '5' }, items: [{ a: 1 }, 'x', null, 3, [1]] })).toEqual({
      metadata: { resourceVersion: '5' },
      items: [{ a: 1 }],
    });
    expect(listOf({ metadata: { resourceVersion: 5 }, items: [] })).toEqual({ metadata: {}, items: [] });
    expect(listOf({ items: [] })).toEqual({ metadata: {}, items: [] });
    expect(() => listOf({ metadata: {} })).toThrow('the list answer has no items array');
    expect(() => listOf('<html>')).toThrow('the list answer has no items array');
  });

  it('lists with the field selector, and names the request as asked', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    const client = kubeClient(loadKubeconfig({ kubeconfig: fake.kubeconfigPath, env: {} }).kc);
    const path = '/apis/networking.k8s.io/v1/servicecidrs';
    const all = await listResource(client, { path, timeoutMs: 5_000 });
    expect(all.items).toHaveLength(1);
    expect(fake.requests.at(-1)!.query).toEqual({});
    await listResource(client, { path, fieldSelector: 'metadata.name=x', timeoutMs: 5_000 });
    expect(fake.requests.at(-1)!.query).toEqual({ fieldSelector: 'metadata.name=x' });
    fake.failLists('servicecidrs', 1, 500);
    await expect(listResource(client, { path, timeoutMs: 5_000, what: 'list of things' })).rejects.toThrow(
      /list of things/,
    );
  });
});
