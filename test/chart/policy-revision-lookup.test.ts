// The chart's policy follows the cluster's Gateway CRD, as `serve --gep-revision auto` and the
// `policy` command do: `helm template --dry-run=server` performs the chart's `lookup` of the CRD
// against a tiny fake API server (discovery, then the CRD's GET), with the CRD as crd-patch leaves it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GepRevision } from '../../src/rules/revision.js';
import { storedGatewayCrd } from '../cluster/gateway-crd.js';
import { all, helm, helmBinary, parseManifests, templateArgs, type RenderOptions } from './helm.js';

const { skipReason } = helmBinary();

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gateways.gateway.networking.k8s.io';
const POLICY = { 'policy.enabled': true, 'policy.serviceCIDRs': ['10.96.0.0/12'] };

describe.skipIf(skipReason !== undefined)('chart policy revision from the Gateway CRD (lookup)', () => {
  let server: Server;
  let apiserver: string;
  let crd: GepRevision | 'none' | 'absent' = 'absent';
  const requests: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0] as string;
      requests.push(path);
      res.setHeader('content-type', 'application/json');
      if (path === '/apis/apiextensions.k8s.io/v1') {
        res.end(
          JSON.stringify({
            kind: 'APIResourceList',
            groupVersion: 'apiextensions.k8s.io/v1',
            resources: [
              {
                name: 'customresourcedefinitions',
                singularName: 'customresourcedefinition',
                namespaced: false,
                kind: 'CustomResourceDefinition',
                verbs: ['get', 'list'],
              },
            ],
          }),
        );
      } else if (path === CRD_PATH && crd !== 'absent') {
        res.end(JSON.stringify(storedGatewayCrd(crd)));
      } else {
        res.statusCode = 404;
        res.end(
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'Status',
            status: 'Failure',
            reason: 'NotFound',
            code: 404,
          }),
        );
      }
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    apiserver = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
  });

  async function renderAgainst(state: typeof crd, setJson: Record<string, unknown> = {}) {
    crd = state;
    requests.length = 0;
    const opts: RenderOptions = {
      setJson: { ...POLICY, ...setJson },
      extraArgs: ['--kube-version', '1.33.0', '--dry-run=server', '--kube-apiserver', apiserver],
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
    expect(requests).toContain(CRD_PATH);
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
