/**
 * check --gep-revision: offline auto is provisional; --from-cluster with auto
 * reads the cluster's Gateway CRD once (and says what it found on stderr); an
 * unreadable CRD is exit 2 naming the flag; a fixed revision is not read.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCheck } from '../../src/cli/check.js';
import { GATEWAY_CRD_NAME } from '../../src/crd/patch.js';
import { FakeApiServer, serviceCidr } from '../kit/fake-apiserver.js';
import { storedGatewayCrd } from '../kit/gateway-crd.js';
import { runCli } from '../crd/run-cli.js';

const GATEWAY = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: a}
spec:
  gatewayClassName: example
  listeners: [{name: http, port: 80, protocol: HTTP}]
  addresses:
  - {type: IPAddress, value: 10.96.0.10, routability: Cluster}
`;

let fake: FakeApiServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  fake = dir = undefined;
});

async function gatewayFile(): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), 'check-rev-'));
  await writeFile(join(dir, 'gw.yaml'), GATEWAY);
  return join(dir, 'gw.yaml');
}

const settingsOf = (stdout: string): Record<string, unknown> =>
  (JSON.parse(stdout) as { settings: Record<string, unknown> }).settings;

describe('check --gep-revision', () => {
  it('offline: auto is provisional (default), a flag is taken as given', async () => {
    const file = await gatewayFile();
    const auto = await runCli(runCheck, ['-f', file, '--service-cidr', '10.96.0.0/12', '-o', 'json']);
    expect(auto.code).toBe(0);
    expect(settingsOf(auto.stdout)).toMatchObject({ gepRevision: 'provisional', gepRevisionFrom: 'default' });
    const fixed = await runCli(runCheck, ['-f', file, '--service-cidr', '10.96.0.0/12', '-o', 'json'], {
      env: { ROUTABILITY_WEBHOOK_GEP_REVISION: 'experimental' },
    });
    expect(settingsOf(fixed.stdout)).toMatchObject({ gepRevision: 'experimental', gepRevisionFrom: 'flag' });
    const bad = await runCli(runCheck, [
      '-f',
      file,
      '--service-cidr',
      '10.96.0.0/12',
      '--gep-revision',
      'seed',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--gep-revision: must be one of auto, provisional, experimental');
  });

  describe('--from-cluster', () => {
    it("auto follows the cluster's Gateway CRD, read once, and says so on stderr", async () => {
      fake = await FakeApiServer.start();
      fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
      fake.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('experimental'));
      const file = await gatewayFile();
      const r = await runCli(runCheck, [
        '-f',
        file,
        '--from-cluster',
        '--kubeconfig',
        fake.kubeconfigPath,
        '-o',
        'json',
      ]);
      expect(r.code).toBe(0);
      expect(settingsOf(r.stdout)).toMatchObject({ gepRevision: 'experimental', gepRevisionFrom: 'cluster' });
      expect(r.stderr).toMatch(
        /^routability-webhook check: GEP-5093 revision experimental: crd\/gateways.gateway.networking.k8s.io carries the experimental \(upstream's schema/,
      );
      expect(fake.requests.filter((q) => q.path.includes('customresourcedefinitions'))).toHaveLength(1);
    });

    it('a fixed revision does not read the CRD', async () => {
      fake = await FakeApiServer.start();
      fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
      fake.forbid('customresourcedefinitions');
      const file = await gatewayFile();
      const r = await runCli(runCheck, [
        '-f',
        file,
        '--from-cluster',
        '--kubeconfig',
        fake.kubeconfigPath,
        '--gep-revision',
        'provisional',
        '-o',
        'json',
      ]);
      expect(r.code).toBe(0);
      expect(settingsOf(r.stdout)).toMatchObject({ gepRevision: 'provisional', gepRevisionFrom: 'flag' });
      expect(fake.requests.filter((q) => q.path.includes('customresourcedefinitions'))).toEqual([]);
    });

    it('an unreadable or undecidable CRD is exit 2, naming --gep-revision', async () => {
      fake = await FakeApiServer.start();
      fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
      fake.forbid('customresourcedefinitions');
      const file = await gatewayFile();
      const args = ['-f', file, '--from-cluster', '--kubeconfig', fake.kubeconfigPath];
      const forbidden = await runCli(runCheck, args);
      expect(forbidden.code).toBe(2);
      expect(forbidden.stdout).toBe('');
      expect(forbidden.stderr).toMatch(
        /--from-cluster: cannot read crd\/gateways.gateway.networking.k8s.io .*HTTP 403.*set --gep-revision/,
      );
      fake.forbid('customresourcedefinitions', false);
      const crd = storedGatewayCrd('provisional');
      fake.crds.set(
        GATEWAY_CRD_NAME,
        JSON.parse(
          JSON.stringify(crd).replaceAll('"pattern":"^(External|', '"pattern":"^(Public|'),
        ) as typeof crd,
      );
      const undecidable = await runCli(runCheck, args);
      expect(undecidable.code).toBe(2);
      expect(undecidable.stderr).toMatch(/cannot tell which GEP-5093 revision .*set --gep-revision/);
    });
  });
});
