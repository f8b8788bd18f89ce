/**
 * End to end: the built `serve` with --gep-revision auto against the fake API
 * server: the revision in /readyz?verbose, /metrics and the logs; a live switch
 * from provisional to experimental while reviews are being answered; and the
 * unreadable and field-missing cases as readiness says them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GATEWAY_CRD_NAME } from '../../src/crd/patch.js';
import { startServeAgainstApi, type RunningServer, type ServingAgainstApi } from '../kit/server-process.js';
import { defaultGateway, gatewayReview } from '../kit/reviews.js';
import { FakeApiServer, serviceCidr } from '../kit/fake-apiserver.js';
import { storedGatewayCrd } from '../kit/gateway-crd.js';
import { eventually } from '../kit/eventually.js';
import { httpGet, httpsPost } from '../kit/http.js';

let fake: FakeApiServer | undefined;
let served: ServingAgainstApi | undefined;
afterEach(async () => {
  await served?.stop();
  await fake?.close();
  served = fake = undefined;
});

async function startAgainstFake(): Promise<ServingAgainstApi> {
  served = await startServeAgainstApi(fake!.kubeconfigPath, {
    prefix: 'serve-rev-',
    // The tests follow the revision through review lines: routine reviews are logged at debug.
    args: ['--log-level', 'debug'],
    env: { ROUTABILITY_WEBHOOK_GEP_REVISION: '' },
  });
  return served;
}

function review(uid: string): string {
  return JSON.stringify(
    gatewayReview({
      uid,
      object: defaultGateway([{ type: 'IPAddress', value: '10.96.0.20', routability: 'Cluster' }]),
    }),
  );
}

interface Verbose {
  ready: boolean;
  failing: string[];
  detail: { gepRevision: Record<string, unknown> };
}

async function verbose(s: RunningServer): Promise<{ status: number; body: Verbose }> {
  const r = await httpGet(s.healthPort, '/readyz?verbose');
  return { status: r.status, body: JSON.parse(r.body) as Verbose };
}

describe('serve --gep-revision auto, against the fake Kubernetes API', () => {
  it('switches from provisional to experimental live while reviews are answered, without a failed review', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('provisional'));
    const { server: s, ca } = await startAgainstFake();
    await eventually(async () => (await verbose(s)).status === 200, 'ready', 10_000, 20);
    expect((await verbose(s)).body.detail.gepRevision).toMatchObject({
      revision: 'provisional',
      crdState: 'provisional',
      source: 'auto: the Gateway CRD of the cluster',
    });
    expect((await httpGet(s.healthPort, '/metrics')).body).toContain(
      'routability_webhook_gep_revision{revision="provisional"} 1',
    );

    // Reviews keep flowing while the CRD changes under the server.
    let n = 0;
    const statuses: number[] = [];
    let stop = false;
    const load = (async () => {
      while (!stop) {
        const res = await httpsPost(s.port, '/validate?timeout=10s', review(`rev-${++n}`), { ca });
        statuses.push(res.status);
      }
    })();
    await eventually(async () => statuses.length >= 5, 'five answers', 10_000, 5);
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('experimental', { generation: 2 }));
    await eventually(
      async () => s.logs.some((l) => l['msg'] === 'review' && l['gepRevision'] === 'experimental'),
      'a review under the experimental revision',
      10_000,
      5,
    );
    const afterSwitch = statuses.length;
    await eventually(
      async () => statuses.length >= afterSwitch + 5,
      'five answers after the switch',
      10_000,
      5,
    );
    stop = true;
    await load;

    expect(statuses.every((c) => c === 200)).toBe(true);
    const reviews = s.logs.filter((l) => l['msg'] === 'review');
    const revisions = reviews.map((l) => l['gepRevision']);
    // Every review was answered under one revision; the switch happened once, never back.
    const firstExperimental = revisions.indexOf('experimental');
    expect(revisions.slice(0, firstExperimental).every((r) => r === 'provisional')).toBe(true);
    expect(revisions.slice(firstExperimental).every((r) => r === 'experimental')).toBe(true);
    expect(firstExperimental).toBeGreaterThan(0);
    const switched = s.logs.find((l) => String(l['msg']).startsWith('GEP-5093 revision switched'));
    expect(switched).toMatchObject({
      gepRevision: 'experimental',
      previousRevision: 'provisional',
      crdGeneration: 2,
    });
    expect((await verbose(s)).body.detail.gepRevision).toMatchObject({
      revision: 'experimental',
      switches: 1,
    });
    const metrics = (await httpGet(s.healthPort, '/metrics')).body;
    expect(metrics).toContain('routability_webhook_gep_revision{revision="experimental"} 1');
    expect(metrics).toContain('routability_webhook_gep_revision{revision="provisional"} 0');
    expect(s.proc.exitCode).toBeNull();
  });

  it('a CRD without routability: ready, and readiness detail and metrics say how to add it', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('none'));
    const { server: s } = await startAgainstFake();
    await eventually(
      async () => (await verbose(s)).body.detail.gepRevision['crdState'] === 'field-missing',
      'the CRD state field-missing',
      10_000,
      20,
    );
    const v = await verbose(s);
    expect(v.status).toBe(200);
    expect(v.body.detail.gepRevision['summary']).toContain('routability-webhook crd-patch --patch-cluster');
    expect((await httpGet(s.healthPort, '/metrics')).body).toContain(
      'routability_webhook_gateway_crd_routability_missing 1',
    );
  });

  it('a CRD it may not read: not ready, naming --gep-revision; reviews get 503', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    fake.forbid('customresourcedefinitions');
    const { server: s, ca } = await startAgainstFake();
    await eventually(
      async () => (await verbose(s)).body.failing.some((f) => f.includes('HTTP 403')),
      'the 403 in the readiness detail',
      10_000,
      20,
    );
    const v = await verbose(s);
    expect(v.status).toBe(503);
    expect(v.body.failing.find((f) => f.startsWith('gep-revision: '))).toContain(
      'set --gep-revision provisional or experimental (ROUTABILITY_WEBHOOK_GEP_REVISION)',
    );
    const res = await httpsPost(s.port, '/validate?timeout=10s', review('nr-1'), { ca });
    expect(res.status).toBe(503);
    expect(res.body).toContain('set --gep-revision');
  });
});
