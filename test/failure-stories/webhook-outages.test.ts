/**
 * Failure stories of the webhook itself, on the chart's defaults and on a
 * proven install (validatingWebhook.failurePolicy: Fail): what the
 * API server (the admission model) refuses while no replica is ready, while
 * the configuration is registered before the server listens, with a
 * caBundle that did not sign the serving certificate, behind a NetworkPolicy
 * that drops the API server's packets, and through a whole-cluster restart.
 *
 * The rule (issue 35): an outage never refuses a status write while status
 * is only warned (the chart's default statusPolicy: warn); spec writes that
 * name a routability fail closed exactly where the entry that judges them
 * says failurePolicy Fail; nothing the webhook would not even be asked about
 * (no routability, kube-system) is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admit } from '../kit/admission-model/api-server.js';
import type { Cluster } from '../kit/admission-model/cluster.js';
import { closedPort, startSilentPort } from '../kit/admission-model/scripted-webhook.js';
import type { Backend, Obj } from '../kit/admission-model/types.js';
import {
  clusterWith,
  patchedCrd,
  refused,
  refusedButWebhookAdmits,
  renderChart,
  setWebhookBackend,
  specFailurePolicies,
  startChartWebhook,
  TIME_SCALE,
  verdicts,
  webhookAlone,
  type Row,
  type Webhook,
} from './rig.js';
import { isStatus, SPEC_WITHOUT_ROUTABILITY, WRITES } from './writes.js';

/** The chart's defaults, and the setting docs/install.md switches to once the install is proven. */
const SETTINGS: [string, Record<string, unknown>][] = [
  ['the chart defaults', {}],
  ['validatingWebhook.failurePolicy Fail', { 'validatingWebhook.failurePolicy': 'Fail' }],
];

const namesRoutability = (r: Row) =>
  !isStatus(r.label) &&
  r.label !== SPEC_WITHOUT_ROUTABILITY &&
  r.label !== 'spec: no addresses' &&
  r.write.namespace !== 'kube-system';

/** The outage rule above, checked row by row. */
function expectOutageRule(c: Cluster, rows: Row[]): void {
  const failClosed = specFailurePolicies(c, WRITES[2]!.write).includes('Fail');
  expect(refused(rows.filter((r) => isStatus(r.label))), 'status writes refused').toEqual([]);
  expect(
    refused(rows.filter((r) => !isStatus(r.label) && !namesRoutability(r))),
    'writes without routability refused',
  ).toEqual([]);
  const spec = rows.filter(namesRoutability);
  expect(refused(spec), 'spec writes naming a routability').toEqual(
    failClosed ? spec.map((r) => r.label) : [],
  );
}

let crd: Obj;
let silent: { port: number; close(): Promise<void> };

beforeAll(async () => {
  crd = await patchedCrd();
  silent = await startSilentPort();
});
afterAll(async () => {
  await silent?.close();
});

describe.each(SETTINGS)('%s', (setting, values) => {
  let docs: Obj[];
  let webhook: Webhook;

  beforeAll(async () => {
    docs = await renderChart({ setJson: values });
    webhook = await startChartWebhook(docs);
  });
  afterAll(async () => {
    await webhook?.stop();
  });

  const alone = (w: Parameters<typeof webhookAlone>[2]) => webhookAlone(docs, webhook, w);

  async function story(backend: Backend, configDocs: Obj[] = docs): Promise<{ c: Cluster; rows: Row[] }> {
    const c = clusterWith(crd, configDocs);
    setWebhookBackend(c, backend);
    return { c, rows: await verdicts(c, WRITES, alone, backend.kind === 'unreachable' ? TIME_SCALE : 1) };
  }

  it('the webhook serving: the API server refuses what the webhook refuses, except where it is not asked (kube-system)', async () => {
    const { rows } = await story({ kind: 'serving', port: webhook.server.port });
    expect(refusedButWebhookAdmits(rows)).toEqual([]);
    expect(refused(rows)).toEqual(['spec: Cluster outside the range (webhook refuses)']);
    const defaulted = rows.find((r) => r.label.includes('defaulted'))!;
    expect((defaulted.model.object['status'] as { addresses: Obj[] }).addresses[0]!['routability']).toBe(
      'External',
    );
    expect(rows.find((r) => r.label.includes('warned'))!.model.warnings.length).toBeGreaterThan(0);
  });

  it('zero ready replicas (an unpullable image, a node drain): no endpoint behind the Service', async () => {
    const { c, rows } = await story({ kind: 'no-endpoints' });
    expectOutageRule(c, rows);
  });

  it('the configuration registered before the server listens: connection refused', async () => {
    const { c, rows } = await story({ kind: 'refused', port: await closedPort() });
    expectOutageRule(c, rows);
  });

  it('a caBundle that did not sign the serving certificate (a re-render whose Secret the pods do not serve)', async () => {
    const rerendered = await renderChart({ setJson: values });
    const { c, rows } = await story({ kind: 'serving', port: webhook.server.port }, rerendered);
    expect(rows.some((r) => r.model.trace.some((t) => /certificate/i.test(t)))).toBe(true);
    expectOutageRule(c, rows);
  });

  it('a NetworkPolicy that drops the API server’s packets: every call waits timeoutSeconds', async () => {
    const { c, rows } = await story({ kind: 'unreachable', port: silent.port });
    expect(rows.some((r) => r.model.trace.some((t) => t.includes('context deadline exceeded')))).toBe(true);
    expectOutageRule(c, rows);
  });

  it('a whole-cluster restart: no status write refused while the replicas come back, the baseline once they serve', async () => {
    // Every object survives in etcd; the API server is up before the webhook's pods: first no
    // endpoint, then pods that do not listen yet, then the server.
    for (const backend of [
      { kind: 'no-endpoints' },
      { kind: 'refused', port: await closedPort() },
    ] as Backend[]) {
      const { c, rows } = await story(backend);
      expectOutageRule(c, rows);
    }
    const { rows } = await story({ kind: 'serving', port: webhook.server.port });
    expect(refusedButWebhookAdmits(rows)).toEqual([]);
  });

  it('says which spec writes fail closed', () => {
    const c = clusterWith(crd, docs);
    expect(specFailurePolicies(c, WRITES[2]!.write)).toEqual([
      setting === 'the chart defaults' ? 'Ignore' : 'Fail',
    ]);
  });
});

describe('statusPolicy enforce: the operator chooses what an outage does to status writes', () => {
  it.each([
    ['Fail', true],
    ['Ignore', false],
  ] as const)(
    'validatingWebhook.statusFailurePolicy %s: status writes refused while no replica is ready: %s',
    async (policy, refusedStatus) => {
      const docs = await renderChart({
        setJson: { 'webhook.statusPolicy': 'enforce', 'validatingWebhook.statusFailurePolicy': policy },
      });
      const c = clusterWith(crd, docs);
      setWebhookBackend(c, { kind: 'no-endpoints' });
      const status = WRITES.filter((w) => isStatus(w.label));
      const verdictsOf = await Promise.all(status.map((w) => admit(c, w.write)));
      expect(verdictsOf.map((v) => !v.allowed)).toEqual(status.map(() => refusedStatus));
    },
  );
});
