/**
 * Watch faults under load: `serve` without --service-cidr, against the fake
 * Kubernetes API server (test/kit/fake-apiserver.ts). The ServiceCIDR
 * watch is dropped 10 times and lists fail while reviews keep coming: zero
 * failed requests, readiness never drops, the ranges never go missing.
 */
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeApiServer, serviceCidr } from '../kit/fake-apiserver.js';
import { httpStatus, waitReady } from '../kit/http.js';
import { makeCerts, spawnWebhook, type Child } from '../kit/server-process.js';
import { tempDir } from '../kit/key-files.js';
import { percentile, runLoad } from './load.js';
import { sleep } from '../kit/eventually.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

describe('ServiceCIDR watch faults under load', () => {
  it('10 dropped watches and failing lists: zero failed requests, ranges never missing', async () => {
    const fake = await FakeApiServer.start();
    cleanups.push(() => fake.close());
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12', 'fd00:10:96::/112']));
    const tmp = await tempDir('watch-faults-');
    cleanups.push(tmp.remove);
    const certs = await makeCerts(join(tmp.path, 'certs'));
    const ca = await readFile(certs.ca, 'utf8');
    const server: Child = await spawnWebhook({
      certs,
      logFile: join(tmp.path, 'server.log'),
      serviceCidrs: '',
      extraArgs: ['--kubeconfig', fake.kubeconfigPath],
      env: { ...process.env, KUBECONFIG: '', ROUTABILITY_WEBHOOK_SERVICE_CIDR: '' },
    });
    cleanups.push(() => server.stop(2_000));
    const readyAfterMs = await waitReady(server.healthPort!, server.spawnedAt, 15_000);
    await fake.until(() => fake.watcherCount('servicecidrs') === 1, 'the ServiceCIDR watch', 10_000);

    let stopping = false;
    const notReady: number[] = [];
    const readinessProbe = (async () => {
      let probes = 0;
      while (!stopping && probes++ < 10_000) {
        const code = await httpStatus(server.healthPort!, '/readyz', 1_000);
        if (code !== 200) notReady.push(code);
        await sleep(50);
      }
      return probes;
    })();
    // Addresses inside 10.96.0.0/12 and fd00:10:96::/112 as Cluster: denied at once if the ranges went missing.
    const load = runLoad({
      port: server.port,
      ca,
      keepAliveWorkers: 4,
      pauseMs: 5,
      stop: () => stopping,
      uidPrefix: 'watch',
      maxRequests: 1_000_000,
      check: (body) =>
        (JSON.parse(body) as { response: { allowed: boolean } }).response.allowed
          ? undefined
          : `denied: ${body}`,
    });

    // Ten drops of a live watch. The watch's backoff doubles per error (0.5 s → 30 s) and
    // resets after 10 s of health, so every third drop follows a healthy pause; every
    // third also makes the relist fail once.
    const listsBefore = fake.listCount('servicecidrs');
    const opened = () => fake.watchesOpened.get('servicecidrs') ?? 0;
    const openedBefore = opened();
    const outages: number[] = [];
    let failedLists = 0;
    for (let i = 0; i < 10; i++) {
      if (i > 0 && i % 3 === 0) await sleep(10_500);
      if (i % 3 === 2) {
        fake.failLists('servicecidrs', 1, 500);
        failedLists++;
      }
      const openedAt = opened();
      const dropped = performance.now();
      fake.dropWatches('servicecidrs');
      await fake.until(
        () => opened() > openedAt && fake.watcherCount('servicecidrs') === 1,
        `watch back after drop ${i + 1}`,
        20_000,
      );
      outages.push(Math.round(performance.now() - dropped));
    }
    await sleep(300);
    stopping = true;
    const [result, probes] = await Promise.all([load, readinessProbe]);
    const listsDuring = fake.listCount('servicecidrs') - listsBefore;
    const liveDrops = opened() - openedBefore;

    expect([...result.failures].slice(0, 5)).toEqual([]);
    // Served throughout (how many is a throughput figure, for benchmarks).
    expect(result.ok).toBeGreaterThan(0);
    expect(notReady).toEqual([]);
    expect(server.process.exitCode).toBeNull();
    expect(liveDrops).toBe(10);
    process.stderr.write(
      `watch faults: ready ${Math.round(readyAfterMs)} ms after spawn; 10 live watch drops (${failedLists} with a failing relist), outages ${outages.join(', ')} ms; ${listsDuring} lists; ${result.ok} reviews, 0 failed, p99 ${percentile(result.latenciesMs, 99).toFixed(1)} ms; ${probes} readiness probes, all 200\n`,
    );
  }, 120_000);
});
