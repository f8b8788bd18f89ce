/**
 * A cluster whose Gateway CRD was never patched (`crd-patch` skipped): the
 * API server prunes `routability` from every write before any webhook sees
 * it, so the chart's matchConditions skip the webhook and an outage refuses
 * nothing — and nothing is checked. The story pins that the model reads the
 * CRD it is given, and what a missed `crd-patch` means.
 */
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../chart/helm.js';
import { admit } from '../kit/admission-model/api-server.js';
import type { Obj } from '../kit/admission-model/types.js';
import { clusterWith, patchedCrd, renderChart, setWebhookBackend } from './rig.js';
import { WRITES } from './writes.js';

const upstreamCrd = () =>
  parse(
    readFileSync(
      join(repoRoot, 'test', 'fixtures', 'upstream', 'gateway-api-v1.6.1', 'crds', 'standard-gateways.yaml'),
      'utf8',
    ),
  ) as Obj;

const addressesOf = (o: Obj) => ((o['spec'] as { addresses?: Obj[] }).addresses ?? []) as Obj[];

describe('the Gateway CRD without routability', () => {
  it('routability is pruned from the write, the webhook is not asked, the outage refuses nothing', async () => {
    const docs = await renderChart({ setJson: { 'validatingWebhook.failurePolicy': 'Fail' } });
    const c = clusterWith(upstreamCrd(), docs);
    setWebhookBackend(c, { kind: 'no-endpoints' });
    const spec = WRITES.filter((w) => w.label.startsWith('spec: Cluster'));
    expect(spec.length).toBeGreaterThan(0);
    for (const { label, write } of spec) {
      const v = await admit(c, write);
      expect(v.allowed, label).toBe(true);
      expect(
        addressesOf(v.object).some((a) => 'routability' in a),
        label,
      ).toBe(false);
      expect(v.trace.join('\n'), label).toMatch(
        /validate\.routability\.gateway\.networking\.k8s\.io: not called \(matchConditions/,
      );
    }
  });

  it('the same write on the patched CRD keeps its routability and reaches the webhook (refused, no endpoint)', async () => {
    const docs = await renderChart({ setJson: { 'validatingWebhook.failurePolicy': 'Fail' } });
    const c = clusterWith(await patchedCrd(), docs);
    setWebhookBackend(c, { kind: 'no-endpoints' });
    const v = await admit(c, WRITES.find((w) => w.label === 'spec: Cluster inside the range')!.write);
    expect(v.allowed).toBe(false);
    expect(v.refusal?.message).toMatch(/no endpoints available/);
  });
});
