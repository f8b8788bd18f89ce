/**
 * Who the NetworkPolicy lets reach the health/metrics port: by default no
 * other pod (the kubelet's probes come from the pod's own node, which
 * Kubernetes admits whatever a policy says), then the scraper by its
 * namespace and pod labels, the probes' source ranges and raw peers, as
 * values.
 */
import { describe, expect, it } from 'vitest';
import { helmBinary, one, render, renderError, type K8sObject } from './helm.js';

const { skipReason } = helmBinary();

interface Rule {
  ports: { port: number; protocol: string }[];
  from?: unknown[];
}

function healthRule(docs: K8sObject[]): Rule | undefined {
  const np = one(docs, 'NetworkPolicy');
  return (np.spec.ingress as Rule[]).find((r) => r.ports.some((p) => p.port === 8080));
}

describe.skipIf(skipReason !== undefined)('NetworkPolicy: the health/metrics port', () => {
  it('is reached by no other pod by default: no rule for it, the webhook port keeps its own', async () => {
    const docs = await render();
    expect(healthRule(docs)).toBeUndefined();
    expect(one(docs, 'NetworkPolicy').spec.ingress).toEqual([{ ports: [{ port: 8443, protocol: 'TCP' }] }]);
  });

  it('admits the scraper by namespace and pod labels together, as one peer', async () => {
    const docs = await render({
      setJson: {
        'networkPolicy.scraperNamespaceLabels': { 'kubernetes.io/metadata.name': 'monitoring' },
        'networkPolicy.scraperPodLabels': { 'app.kubernetes.io/name': 'prometheus' },
      },
    });
    expect(healthRule(docs)).toEqual({
      ports: [{ port: 8080, protocol: 'TCP' }],
      from: [
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
          podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
        },
      ],
    });
  });

  it('admits pod labels alone (the release namespace), probe ranges and raw peers, in that order after the peers', async () => {
    const docs = await render({
      setJson: {
        'networkPolicy.metricsFrom': [{ ipBlock: { cidr: '192.0.2.0/24' } }],
        'networkPolicy.scraperPodLabels': { app: 'scraper' },
        'networkPolicy.probeFrom': ['10.0.0.0/16', 'fd00::/64'],
      },
    });
    expect(healthRule(docs)?.from).toEqual([
      { ipBlock: { cidr: '192.0.2.0/24' } },
      { podSelector: { matchLabels: { app: 'scraper' } } },
      { ipBlock: { cidr: '10.0.0.0/16' } },
      { ipBlock: { cidr: 'fd00::/64' } },
    ]);
  });

  it('a ServiceMonitor with no scraper named keeps the port open to any source, as before', async () => {
    const docs = await render({ setJson: { 'metrics.serviceMonitor.enabled': true } });
    expect(healthRule(docs)).toEqual({ ports: [{ port: 8080, protocol: 'TCP' }] });
    const named = await render({
      setJson: {
        'metrics.serviceMonitor.enabled': true,
        'networkPolicy.scraperNamespaceLabels': { team: 'observability' },
      },
    });
    expect(healthRule(named)?.from).toEqual([
      { namespaceSelector: { matchLabels: { team: 'observability' } } },
    ]);
  });

  it('refuses a probe range that is not a string', async () => {
    expect(await renderError({ setJson: { 'networkPolicy.probeFrom': [{ cidr: '10.0.0.0/8' }] } })).toMatch(
      /probeFrom/,
    );
  });
});
