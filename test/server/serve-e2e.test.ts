/**
 * End to end: the built `serve`, with no --service-cidr, against the fake
 * Kubernetes API server, answering real HTTPS reviews that change when a
 * ServiceCIDR is added — no restart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startServeAgainstApi, type ServingAgainstApi } from '../kit/server-process.js';
import { defaultGateway, gatewayReview } from '../kit/reviews.js';
import { FakeApiServer, ipAddress, serviceCidr } from '../kit/fake-apiserver.js';
import { eventually } from '../kit/helpers.js';
import { eventually as eventuallyAsync } from '../kit/eventually.js';
import { httpGet, httpsPost } from '../kit/http.js';

function review(uid: string, value: string, routability = 'Cluster'): string {
  return JSON.stringify(
    gatewayReview({ uid, object: defaultGateway([{ type: 'IPAddress', value, routability }]) }),
  );
}

interface Answer {
  status: number;
  allowed?: boolean;
  message?: string;
}

let fake: FakeApiServer | undefined;
let served: ServingAgainstApi | undefined;

afterEach(async () => {
  await served?.stop();
  await fake?.close();
  served = fake = undefined;
});

async function startAgainstFake(): Promise<ServingAgainstApi> {
  served = await startServeAgainstApi(fake!.kubeconfigPath, { prefix: 'serve-e2e-' });
  return served;
}

describe('serve with no --service-cidr, against the fake Kubernetes API', () => {
  it('answers from the ServiceCIDRs and IPAddresses of the cluster, and follows a new ServiceCIDR live', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    fake.put(
      'ipaddresses',
      ipAddress('10.96.0.10', { resource: 'services', namespace: 'kube-system', name: 'kube-dns' }),
    );
    const { server: s, ca } = await startAgainstFake();

    await eventually(
      () => fake!.watcherCount('servicecidrs') === 1,
      'the server to watch ServiceCIDRs',
      10_000,
    );
    // Ready once the Gateway CRD (none here: not installed) has been read too (--gep-revision auto).
    await eventuallyAsync(
      async () => (await httpGet(s.healthPort, '/readyz')).status === 200,
      'ready',
      10_000,
      20,
    );

    let n = 0;
    const ask = async (value: string): Promise<Answer> => {
      const res = await httpsPost(s.port, '/validate?timeout=10s', review(`e2e-${++n}`, value), { ca });
      const body = JSON.parse(res.body) as { response?: { allowed: boolean; status?: { message?: string } } };
      return { status: res.status, allowed: body.response?.allowed, message: body.response?.status?.message };
    };

    expect(await ask('10.96.0.20')).toMatchObject({ status: 200, allowed: true });
    expect(await ask('10.100.0.5')).toEqual({
      status: 200,
      allowed: false,
      message:
        'spec.addresses[0].value: Invalid value: "10.100.0.5": routability Cluster requires an address inside the service range (10.96.0.0/16)',
    });
    expect(await ask('10.96.0.10')).toEqual({
      status: 200,
      allowed: false,
      message:
        'spec.addresses[0].value: Invalid value: "10.96.0.10": already allocated to services/kube-system/kube-dns',
    });

    // The allocation came from one GET of that address: nothing listed, nothing watched.
    expect(fake.listCount('ipaddresses')).toBe(0);
    expect(fake.requests.some((r) => r.path === '/apis/networking.k8s.io/v1/ipaddresses/10.96.0.10')).toBe(
      true,
    );
    const verbose = JSON.parse((await httpGet(s.healthPort, '/readyz?verbose')).body) as {
      detail: { allocatedIPs: { state: string } };
    };
    expect(verbose.detail.allocatedIPs.state).toBe('ok');

    // A new ServiceCIDR appears in the cluster: the very next answers change, no restart.
    fake.put('servicecidrs', serviceCidr('extra', ['10.100.0.0/16']));
    const emitted = fake.lastEventWrittenAt;
    let answer: Answer = { status: 0 };
    // Generous for a loaded machine; the latency is printed, and measured in benchmarks.
    const deadline = performance.now() + 10_000;
    while (!(answer = await ask('10.100.0.5')).allowed && performance.now() < deadline);
    const latency = performance.now() - emitted;
    console.log(`serve e2e: ServiceCIDR event → changed HTTPS answer in ${latency.toFixed(1)} ms`);
    expect(answer).toMatchObject({ status: 200, allowed: true });

    const metrics = await httpGet(s.healthPort, '/metrics');
    expect(metrics.body).toContain(
      'routability_webhook_service_ranges{cidr="10.100.0.0/16",terminating="false"} 1',
    );
    expect(metrics.body).toMatch(
      /routability_webhook_watch_last_sync_timestamp_seconds\{resource="servicecidrs"\} \d/,
    );
    expect(
      s.logs.some((l) => l['msg'] === 'service ranges changed' && l['new'] === '10.100.0.0/16,10.96.0.0/16'),
    ).toBe(true);
    expect(s.proc.exitCode).toBeNull();
  });

  it('stays not ready, naming --service-cidr, when the cluster serves no ServiceCIDR API', async () => {
    fake = await FakeApiServer.start();
    fake.serveVersions('servicecidrs', []);
    const { server: s, ca } = await startAgainstFake();
    await eventually(() => fake!.listCount('servicecidrs', 'v1beta1') >= 1, 'the v1beta1 fallback', 10_000);
    let last = { status: 0, body: '' };
    await eventuallyAsync(
      async () => {
        last = await httpGet(s.healthPort, '/readyz?verbose');
        return last.body.includes('serves no ServiceCIDR API');
      },
      'the verbose readiness',
      10_000,
      20,
    );
    expect(last.status).toBe(503);
    const body = last.body;
    expect(body).toContain('--service-cidr (ROUTABILITY_WEBHOOK_SERVICE_CIDR)');
    const res = await httpsPost(s.port, '/validate?timeout=10s', review('e2e-nr', '10.96.0.5'), { ca });
    expect(res.status).toBe(503);
  });
});
