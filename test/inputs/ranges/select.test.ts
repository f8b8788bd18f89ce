/**
 * Where the service ranges come from (src/inputs/ranges/select.ts), for the
 * start-ups that use no cluster: --service-cidr alone, and --dev after it
 * ignored an unusable kubeconfig (`noCluster`), with or without
 * --service-cidr. The live ServiceCIDR watch is tested in
 * service-cidr-watch.test.ts.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FLAG_SOURCE } from '../../../src/inputs/ranges/flag-source.js';
import { selectClusterSources } from '../../../src/inputs/ranges/select.js';
import { DEV_SERVICE_CIDR } from '../../../src/config/serve.js';
import { capturingLogger, serveConfig } from '../../kit/helpers.js';

const NO_CLUSTER = 'no kubeconfig was found';

async function select(args: readonly string[], noCluster?: string) {
  const { logger, lines } = capturingLogger();
  const sources = await selectClusterSources({
    config: serveConfig(args),
    logger,
    registry: new Registry(),
    ...(noCluster !== undefined ? { noCluster } : {}),
    // A live source would look here and find nothing: a test that lands
    // there by mistake fails on the description, not on this machine's files.
    kubeconfigOptions: { env: {}, home: '/nonexistent-home', serviceAccountTokenFile: '/nonexistent/token' },
  });
  try {
    return { described: sources.ranges.describe(), allocatedIPs: sources.allocatedIPs, lines };
  } finally {
    await sources.close();
  }
}

describe('choosing the service ranges without a cluster', () => {
  it.each([
    {
      name: '--service-cidr alone: the flag, no allocated-IP lookups',
      args: ['--service-cidr', '10.0.0.0/16'],
      noCluster: undefined,
      source: FLAG_SOURCE,
      ranges: ['10.0.0.0/16'],
    },
    {
      name: '--dev with no cluster and --service-cidr: the flag',
      args: ['--dev', '--service-cidr', '10.0.0.0/16'],
      noCluster: NO_CLUSTER,
      source: FLAG_SOURCE,
      ranges: ['10.0.0.0/16'],
    },
    {
      name: '--dev with no cluster, --service-cidr and --check-allocated-ips: the flag, no lookups (no cluster to ask)',
      args: ['--dev', '--service-cidr', '10.0.0.0/16', '--check-allocated-ips'],
      noCluster: NO_CLUSTER,
      source: FLAG_SOURCE,
      ranges: ['10.0.0.0/16'],
    },
    {
      name: '--dev with no cluster alone: the embedded default, saying why',
      args: ['--dev'],
      noCluster: NO_CLUSTER,
      source: `--dev default ${DEV_SERVICE_CIDR} (${NO_CLUSTER})`,
      ranges: [DEV_SERVICE_CIDR],
    },
  ])('$name', async ({ args, noCluster, source, ranges }) => {
    const { described, allocatedIPs } = await select(args, noCluster);
    expect(described).toEqual({ source, ranges });
    expect(allocatedIPs).toBeUndefined();
  });

  // An explicit --check-allocated-ips asks for the cluster even with
  // --service-cidr: without credentials the operator is told the rule is off.
  it('--service-cidr with --check-allocated-ips and no credentials: the flag, and a warning that the rule is skipped', async () => {
    const { described, allocatedIPs, lines } = await select([
      '--service-cidr',
      '10.0.0.0/16',
      '--check-allocated-ips',
    ]);
    expect(described).toEqual({ source: FLAG_SOURCE, ranges: ['10.0.0.0/16'] });
    expect(allocatedIPs).toBeUndefined();
    expect(lines.map((l) => l.msg)).toContain(
      '--check-allocated-ips: no usable Kubernetes credentials; the ClusterAddressAllocated rule is skipped',
    );
  });

  it('the flag source logs as the cluster component', async () => {
    const { lines } = await select(['--service-cidr', '10.0.0.0/16']);
    const line = lines.find((l) => l.msg.startsWith('service ranges from --service-cidr'));
    expect(line).toMatchObject({ component: 'cluster', source: 'flag' });
  });
});
