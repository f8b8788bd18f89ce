// The chart's policy follows the cluster's Gateway CRD, as `serve --gep-revision auto` and the
// `policy` command do: `helm template --dry-run=server` performs the chart's `lookup` of the CRD
// against a tiny fake API server (discovery, then the CRD's GET), with the CRD as crd-patch leaves it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GepRevision } from '../../src/rules/revision.js';
import { storedGatewayCrd } from '../kit/gateway-crd.js';
import { all, helm, helmBinary, parseManifests, templateArgs, type RenderOptions } from './helm.js';
import { startLookupApiserver, type LookupApiserver } from './lookup-apiserver.js';

const { skipReason } = helmBinary();

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gateways.gateway.networking.k8s.io';
const POLICY = { 'policy.enabled': true, 'policy.serviceCIDRs': ['10.96.0.0/12'] };

describe.skipIf(skipReason !== undefined)('chart policy revision from the Gateway CRD (lookup)', () => {
  let fake: LookupApiserver;
  let crd: GepRevision | 'none' | 'absent' = 'absent';

  beforeAll(async () => {
    fake = await startLookupApiserver(
      {
        '/apis/apiextensions.k8s.io/v1': [
          {
            name: 'customresourcedefinitions',
            singularName: 'customresourcedefinition',
            namespaced: false,
            kind: 'CustomResourceDefinition',
          },
        ],
      },
      (path) => (path === CRD_PATH && crd !== 'absent' ? storedGatewayCrd(crd) : undefined),
    );
  });
  afterAll(() => fake.close());

  async function renderAgainst(state: typeof crd, setJson: Record<string, unknown> = {}) {
    crd = state;
    fake.requests.length = 0;
    const opts: RenderOptions = {
      setJson: { ...POLICY, ...setJson },
      extraArgs: ['--kube-version', '1.33.0', '--dry-run=server', '--kube-apiserver', fake.url],
    };
    return helm(templateArgs(opts));
  }

  const revisions = (stdout: string) => [
    ...new Set(
      all(parseManifests(stdout), 'ValidatingAdmissionPolicy').map(
        (p) => p.metadata.annotations?.['gateway-routability-webhook.io/gep-revision'],
      ),
    ),
  ];

  it.each([
    ['provisional', ['provisional']],
    ['experimental', ['experimental']],
    // Nothing can carry the field, or Gateway API is not installed: the documented fallback.
    ['none', ['provisional']],
    ['absent', ['provisional']],
  ] as const)('a CRD with the %s schema: the policy enforces %j', async (state, expected) => {
    const result = await renderAgainst(state);
    expect(result.code, result.stderr).toBe(0);
    expect(fake.requests).toContain(`GET ${CRD_PATH}`);
    expect(revisions(result.stdout)).toEqual(expected);
  });

  it('refuses a revision given by value that the CRD contradicts, naming both', async () => {
    const result = await renderAgainst('experimental', { 'policy.gepRevision': 'provisional' });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/the Gateway CRD carries the experimental revision of routability/);
    expect(result.stderr).toMatch(/asked for provisional/);
  });

  it('accepts a revision given by value that the CRD agrees with, or that no CRD contradicts', async () => {
    for (const [state, given] of [
      ['experimental', 'experimental'],
      ['none', 'experimental'],
    ] as const) {
      const result = await renderAgainst(state, { 'policy.gepRevision': given });
      expect(result.code, result.stderr).toBe(0);
      expect(revisions(result.stdout)).toEqual([given]);
    }
  });
});
