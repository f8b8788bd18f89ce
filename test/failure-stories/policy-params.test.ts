/**
 * Failure stories of policy mode: the `policy` output applied as
 * docs/policy.md says on a new cluster (only the default namespaces), the
 * same apply interrupted after each object, and the params ConfigMap absent,
 * empty (the chart's, before a serve replica writes it) and stale (an old
 * service range). The rule (issue 35 item 4): in no state does the API
 * server refuse a write the webhook itself (same rule flags, the cluster's
 * real range) admits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from '../kit/admission-model/cluster.js';
import type { Obj } from '../kit/admission-model/types.js';
import {
  clusterWith,
  patchedCrd,
  policyOutput,
  refused,
  refusedButWebhookAdmits,
  renderChart,
  setWebhookBackend,
  startChartWebhook,
  verdicts,
  webhookAlone,
  type Webhook,
} from './rig.js';
import { WRITES } from './writes.js';

let crd: Obj;
/** The chart's defaults and the webhook they run: the reference for policy stories. */
let docs: Obj[];
let webhook: Webhook;
let warnDocs: Obj[];
let warnWebhook: Webhook;

beforeAll(async () => {
  [docs, crd, warnDocs] = await Promise.all([
    renderChart(),
    patchedCrd(),
    renderChart({ set: { 'webhook.specPolicy': 'warn', 'webhook.statusPolicy': 'warn' } }),
  ]);
  [webhook, warnWebhook] = await Promise.all([startChartWebhook(docs), startChartWebhook(warnDocs)]);
});
afterAll(async () => {
  await webhook?.stop();
  await warnWebhook?.stop();
});

const alone = (w: Parameters<typeof webhookAlone>[2]) => webhookAlone(docs, webhook, w);
const aloneWarn = (w: Parameters<typeof webhookAlone>[2]) => webhookAlone(warnDocs, warnWebhook, w);

/** A new cluster with the patched CRD, the namespace `apps`, and no webhook registered. */
function newCluster(): Cluster {
  const c = Cluster.fresh();
  c.apply(crd);
  c.addNamespace('apps', { team: 'web' });
  return c;
}

const kindAndName = (o: Obj) => `${String(o['kind'])}/${String((o['metadata'] as { name: string }).name)}`;

describe('policy output applied in order on a new cluster', () => {
  it('kubectl apply -f policy.yaml: every object applies and nothing the webhook admits is refused', async () => {
    const objects = await policyOutput();
    const c = newCluster();
    const { errors } = c.applyAll(objects);
    expect(errors, 'objects kubectl could not apply').toEqual([]);
    expect(refusedButWebhookAdmits(await verdicts(c, WRITES, alone))).toEqual([]);
  });

  it('the apply interrupted after each object leaves no state that refuses what the webhook admits', async () => {
    const objects = await policyOutput();
    const bad: string[] = [];
    for (let k = 0; k <= objects.length; k++) {
      const c = newCluster();
      c.applyAll(objects.slice(0, k));
      const wrong = refusedButWebhookAdmits(await verdicts(c, WRITES, alone));
      if (wrong.length > 0)
        bad.push(
          `after ${objects.slice(0, k).map(kindAndName).join(', ') || 'nothing'}: ${wrong.length} refused, e.g. ${wrong[0]}`,
        );
    }
    expect(bad).toEqual([]);
  });

  it('under warn/warn nothing the webhook admits under warn is refused, even with no params', async () => {
    const objects = await policyOutput(['--spec-policy', 'warn', '--status-policy', 'warn']);
    const c = newCluster();
    c.applyAll(objects.filter((o) => o['kind'] !== 'ConfigMap'));
    expect(refusedButWebhookAdmits(await verdicts(c, WRITES, aloneWarn))).toEqual([]);
  });
});

describe('the params ConfigMap', () => {
  it('present and current (the baseline): the policy alone refuses what the webhook refuses', async () => {
    const objects = await policyOutput();
    const c = newCluster();
    c.addNamespace('gateway-routability-webhook');
    const { errors } = c.applyAll(objects);
    expect(errors).toEqual([]);
    const rows = await verdicts(c, WRITES, alone);
    expect(refusedButWebhookAdmits(rows)).toEqual([]);
    expect(rows.filter((r) => !r.model.allowed).map((r) => r.model.refusal?.by)).toEqual([
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicy',
    ]);
    // The policy has no namespaceSelector: kube-system is judged too, where the chart's webhook is not asked.
    expect(refused(rows)).toEqual([
      'spec: Cluster outside the range (webhook refuses)',
      'spec: kube-system, Cluster outside the range',
    ]);
  });

  it('absent (deleted, or its namespace never created): nothing the webhook admits is refused', async () => {
    const objects = await policyOutput();
    const c = newCluster();
    c.addNamespace('gateway-routability-webhook');
    c.applyAll(objects);
    c.configMaps.clear();
    expect(refusedButWebhookAdmits(await verdicts(c, WRITES, alone))).toEqual([]);
  });

  it('empty (the chart beside the webhook, before a serve replica writes it): nothing the webhook admits is refused', async () => {
    const chart = await renderChart({ setJson: { 'policy.enabled': true } });
    const c = clusterWith(crd, chart);
    const params = [...c.configMaps.values()];
    expect(params.map((p) => p['data'] ?? {})).toEqual([{}]);
    // The chart's own serve, on the chart's Secret, with the same rule flags as the reference.
    const served = await startChartWebhook(chart);
    try {
      setWebhookBackend(c, { kind: 'serving', port: served.server.port });
      expect(refusedButWebhookAdmits(await verdicts(c, WRITES, alone))).toEqual([]);
    } finally {
      await served.stop();
    }
  });

  /** The params still name the old range 10.0.0.0/16; the cluster (and the webhook) moved to 10.96.0.0/12. */
  async function staleRows() {
    const objects = await policyOutput(['--service-cidr', '10.0.0.0/16']);
    const c = newCluster();
    c.applyAll(objects);
    return verdicts(c, WRITES, alone);
  }

  // Fails by the product's choice, not by a bug in the story: stale params are the one state the
  // policy cannot tell from current ones (it reads only the request and the params; CEL has no
  // clock), so a Cluster address in the range the params lack is refused until they are rewritten.
  // docs/policy.md § Params states documents it as the one "yes, for that write" (issue 35 item 4
  // asks for "stale" too); the next test bounds what is refused meanwhile.
  it.fails(
    'stale (an old service range): nothing the webhook, following the live range, admits is refused',
    async () => {
      expect(refusedButWebhookAdmits(await staleRows())).toEqual([]);
    },
  );

  it('stale: what is refused wrongly is only the Cluster addresses in the range the params lack', async () => {
    const rows = await staleRows();
    expect(rows.filter((r) => !r.model.allowed && r.webhookAdmits).map((r) => r.label)).toEqual([
      'spec: Cluster inside the range',
      'spec: dry run, Cluster inside the range',
      'spec: UPDATE adds a Cluster address',
    ]);
    for (const message of refusedButWebhookAdmits(rows))
      expect(message).toMatch(
        /routability Cluster requires an address inside the service range \(10\.0\.0\.0\/16\)/,
      );
    expect(rows.filter((r) => r.label.startsWith('status:')).every((r) => r.model.allowed)).toBe(true);
  });
});
