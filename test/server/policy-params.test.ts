/**
 * `serve --policy-params NAMESPACE/NAME` in process (src/server/policy-params.ts):
 * the ConfigMap the flag names is the one read and written, in the flag's
 * namespace even when the pod runs in another (POD_NAMESPACE); without the
 * flag nothing starts but the two counters are registered; without a cluster
 * the sync is off and says why; stop() ends the requests.
 */
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { staticSources } from '../../src/inputs/ranges/static-source.js';
import { ruleInputs } from '../../src/inputs/rule-inputs.js';
import { NO_KUBECONFIG_REASON } from '../../src/kube/kubeconfig-source.js';
import { paramsData } from '../../src/policy/index.js';
import { startPolicyParams } from '../../src/server/policy-params.js';
import { FakeApiServer } from '../kit/fake-apiserver.js';
import { capturingLogger, serveConfig } from '../kit/helpers.js';
import { FIXTURE_SETTINGS } from '../kit/app.js';
import { ranges } from '../kit/gateways.js';
import { FakeConfigMap } from './fake-configmap.js';
import { eventually, sleep } from '../kit/eventually.js';

const RANGES = ranges('10.96.0.0/16');
const METRICS = [
  'routability_webhook_policy_params_writes_total',
  'routability_webhook_policy_params_failures_total',
];

function parts(args: readonly string[], noCluster?: string) {
  const { logger, lines } = capturingLogger();
  const registry = new Registry();
  return {
    lines,
    registry,
    parts: {
      config: serveConfig(args),
      logger,
      registry,
      inputs: ruleInputs({ settings: FIXTURE_SETTINGS, sources: staticSources(RANGES, 'test') }),
      // The audit off: no Lease, so this replica writes.
      leadership: undefined,
      noCluster,
    },
  };
}

const savedNamespace = process.env['POD_NAMESPACE'];
let fake: FakeApiServer | undefined;
let stop: (() => void) | undefined;
afterEach(async () => {
  stop?.();
  stop = undefined;
  await fake?.close();
  fake = undefined;
  if (savedNamespace === undefined) delete process.env['POD_NAMESPACE'];
  else process.env['POD_NAMESPACE'] = savedNamespace;
});

async function counted(registry: Registry, name: string): Promise<number | undefined> {
  return (await registry.getSingleMetric(name)?.get())?.values[0]?.value;
}

describe('serve --policy-params', () => {
  it("reads and writes the ConfigMap the flag names, in the flag's namespace, not the pod's", async () => {
    fake = await FakeApiServer.start();
    const cm = new FakeConfigMap('grw-params-ns', 'grw-params');
    fake.addRoute(cm.route);
    // The pod runs elsewhere (the chart sets POD_NAMESPACE from the downward API).
    process.env['POD_NAMESPACE'] = 'grw-pods';
    const { parts: p, registry } = parts([
      '--policy-params',
      'grw-params-ns/grw-params',
      '--kubeconfig',
      fake.kubeconfigPath,
    ]);
    const sync = await startPolicyParams(p);
    stop = sync?.stop;
    await eventually(() => cm.data !== undefined, 'the write', 5_000);
    expect(cm.data).toEqual(paramsData(RANGES));
    const paths = new Set(fake.requests.map((r) => r.path));
    expect(paths).toEqual(new Set([cm.path]));
    await eventually(() => sync?.describe()['state'] === 'in step', 'in step', 5_000);
    expect(sync?.describe()).toEqual({
      configMap: 'grw-params-ns/grw-params',
      state: 'in step',
      data: paramsData(RANGES),
    });
    expect(await counted(registry, METRICS[0]!)).toBe(1);
    expect(await counted(registry, METRICS[1]!)).toBe(0);
  });

  it('stop() ends the sync: no request after it', async () => {
    fake = await FakeApiServer.start();
    const cm = new FakeConfigMap('grw', 'grw-params');
    fake.addRoute(cm.route);
    const { parts: p } = parts(['--policy-params', 'grw/grw-params', '--kubeconfig', fake.kubeconfigPath]);
    const sync = await startPolicyParams(p);
    await eventually(() => cm.data !== undefined, 'the write', 5_000);
    sync!.stop();
    const requests = fake.requests.length;
    // The ranges here never change: this shows no stray request, not a stopped re-check.
    await sleep(200);
    expect(fake.requests).toHaveLength(requests);
  });

  it('without the flag: nothing starts, and both counters are registered (at 0)', async () => {
    const { parts: p, registry, lines } = parts([]);
    expect(await startPolicyParams(p)).toBeUndefined();
    for (const name of METRICS) expect(await counted(registry, name)).toBe(0);
    const described = await registry.getMetricsAsJSON();
    expect(described.map((m) => [m.name, m.type, m.help])).toEqual([
      [
        METRICS[0],
        'counter',
        "Writes that changed the policy's params ConfigMap (--policy-params) to the service ranges in force.",
      ],
      [
        METRICS[1],
        'counter',
        "Failed reads or writes of the policy's params ConfigMap; each is retried with backoff.",
      ],
    ]);
    expect(lines).toEqual([]);
  });

  it.each([
    {
      what: '--dev ignored the kubeconfig',
      args: [],
      noCluster: 'unusable',
      reason: 'no cluster (--dev ignored the kubeconfig)',
    },
    { what: 'no kubeconfig is found', args: [], noCluster: undefined, reason: NO_KUBECONFIG_REASON },
  ])('is off, saying why, when $what', async (t) => {
    const { parts: p, lines } = parts(['--policy-params', 'grw/grw-params', ...t.args], t.noCluster);
    const off = await startPolicyParams(p);
    expect(off?.describe()).toEqual({ enabled: false, reason: t.reason });
    off?.stop();
    expect(lines.map((l) => [l.level, l['component'], l['configMap'], l.msg])).toEqual([
      [50, 'policy-params', 'grw/grw-params', `policy params not kept in step: ${t.reason}`],
    ]);
  });
});
