/**
 * The Gateway CRD revision watch before it has read the CRD: what /readyz and
 * the detail say while waiting, when apiextensions.k8s.io/v1 is not served and
 * once the watch is closed; the start-up log line; and that the backoff given
 * is the one the watch retries with.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RevisionSource } from '../../../src/inputs/revision/crd-revision.js';
import type { BackoffOptions } from '../../../src/kube/watch.js';
import { GATEWAY_CRD_NAME } from '../../../src/crd/patch.js';
import { FakeApiServer } from '../../kit/fake-apiserver.js';
import { storedGatewayCrd } from '../../kit/gateway-crd.js';
import { eventually, FAST_BACKOFF, startCrdRevisionWatch, type CrdWatchHarness } from '../../kit/helpers.js';

const HINT = 'set --gep-revision provisional or experimental (ROUTABILITY_WEBHOOK_GEP_REVISION)';

let fake: FakeApiServer | undefined;
let source: RevisionSource | undefined;

afterEach(async () => {
  await source?.close();
  await fake?.close();
  fake = source = undefined;
});

function start(f: FakeApiServer, backoff?: Partial<BackoffOptions>): CrdWatchHarness {
  const h = startCrdRevisionWatch(f.kubeconfigPath, backoff);
  source = h.source;
  return h;
}

const watchOf = (s: RevisionSource) => s.describe()['watch'] as { state: string; nextRetryInMs?: number };

describe('the Gateway CRD watch before its first read', () => {
  it('says at start that it follows the cluster, and that it waits for the first read', async () => {
    fake = await FakeApiServer.start();
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('experimental'));
    const h = start(fake);
    // Before the first list has been answered (it cannot have been: nothing has awaited yet).
    const waiting = `waiting for the first read of crd/${GATEWAY_CRD_NAME} from ${h.description}`;
    expect(h.source.readiness()).toEqual({ ready: false, reason: waiting });
    expect(h.source.current()).toBeUndefined();
    const detail = h.source.describe();
    expect(detail).toMatchObject({
      revision: null,
      crdState: 'not read yet',
      reason: waiting,
      switches: 0,
    });
    expect(detail).not.toHaveProperty('summary');
    expect(h.lines[0]).toMatchObject({
      level: 30,
      gepRevision: 'auto',
      crd: GATEWAY_CRD_NAME,
      cluster: h.description,
      msg: 'GEP-5093 revision: following the Gateway CRD of the cluster (--gep-revision auto)',
    });
    // Once read, the detail carries the summary instead of a reason.
    await eventually(() => h.source.current() === 'experimental', 'the first read');
    expect(h.source.describe()).not.toHaveProperty('reason');
  });

  it('an API server without apiextensions.k8s.io/v1: not ready, logged once as an error naming the flag', async () => {
    fake = await FakeApiServer.start();
    fake.serveVersions('customresourcedefinitions', []);
    const h = start(fake);
    await eventually(() => watchOf(h.source).state === 'absent', 'the 404');
    const reason = `the API server serves no apiextensions.k8s.io/v1, so crd/${GATEWAY_CRD_NAME} cannot be read: ${HINT}`;
    expect(h.source.readiness()).toEqual({ ready: false, reason });
    expect(h.source.describe()['reason']).toBe(reason);
    const errors = h.lines.filter((l) => l.level === 50);
    expect(errors).toEqual([
      expect.objectContaining({
        server: h.description,
        msg: `the API server serves no apiextensions.k8s.io/v1: cannot read the Gateway CRD; ${HINT}`,
      }),
    ]);
  });

  it('once closed before any read, says the watch is stopped', async () => {
    fake = await FakeApiServer.start();
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('experimental'));
    const h = start(fake);
    await h.source.close();
    expect(h.source.readiness()).toEqual({ ready: false, reason: 'the Gateway CRD watch is stopped' });
    expect(h.source.describe()).toMatchObject({
      crdState: 'not read yet',
      reason: 'the Gateway CRD watch is stopped',
      watch: { state: 'stopped' },
    });
  });

  it('retries a refused read after the backoff it was given', async () => {
    fake = await FakeApiServer.start();
    fake.forbid('customresourcedefinitions');
    // A long first delay (the default is 0.5 s ± 20 %): no retry happens during the test.
    const h = start(fake, { ...FAST_BACKOFF, initialMs: 40_000, maxMs: 40_000 });
    await eventually(() => /HTTP 403/.test(h.source.readiness().reason ?? ''), 'the 403');
    const reason = h.source.readiness().reason ?? '';
    expect(reason.startsWith(`cannot read crd/${GATEWAY_CRD_NAME} from ${h.description} (HTTP 403`)).toBe(
      true,
    );
    expect(reason.endsWith(`; retrying): ${HINT}, or allow get, list and watch on it`)).toBe(true);
    expect(watchOf(h.source).nextRetryInMs).toBeGreaterThan(20_000);
  });
});
