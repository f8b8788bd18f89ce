/**
 * A watch the server leaves silent is cut off 15 s after the timeoutSeconds it
 * was asked to end by, and a real watch follows. This waits the grace out in
 * real time (16 s), so it is its own file: stryker.config.mjs keeps it out of
 * the tests run against each src/kube mutant (docs/dev/testing.md).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ResourceWatch } from '../../src/kube/watch.js';
import { FakeApiServer, serviceCidr } from '../kit/fake-apiserver.js';
import { startServiceCidrWatch } from '../kit/helpers.js';

let fake: FakeApiServer | undefined;
let watch: ResourceWatch<{ metadata?: { name?: string } }> | undefined;
afterEach(async () => {
  await watch?.stop();
  await fake?.close();
  watch = fake = undefined;
});

const opened = () => fake!.watchesOpened.get('servicecidrs') ?? 0;

describe('the resource watch left silent by the API server', () => {
  it('asks the server to end each watch (timeoutSeconds) and replaces one left silent', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    fake.faults.add({ verbs: ['watch'] }, { kind: 'silent' }, { count: 1 });
    const started = startServiceCidrWatch(fake.kubeconfigPath, {
      initialMs: 20,
      maxMs: 200,
      resetAfterMs: 10_000,
      absentRetryMs: 60_000,
      watchTimeoutMs: 500,
      listTimeoutMs: 2_000,
    });
    watch = started.watch;
    const { lines } = started;
    await fake.until(() => fake!.count({ verb: 'watch' }) === 1, 'the first watch');
    const asked = fake.requests.find((r) => r.verb === 'watch')!;
    expect(Number(asked.query['timeoutSeconds'])).toBeGreaterThanOrEqual(1);
    expect(Number(asked.query['timeoutSeconds'])).toBeLessThanOrEqual(1);
    // The silent one (1 s timeout + 15 s grace) is cut off, and a real watch follows.
    await fake.until(() => opened() === 1, 'a watch replacing the silent one', 20_000);
    expect(lines.some((l) => String(l['err']).includes('not ended 15 s after its 1 s timeout'))).toBe(true);
    expect(watch!.objects()).toHaveLength(1);
  }, 30_000);
});
