/**
 * docs/policy.md's first example, line by line, against the fake API server
 * with the Gateway CRD patched as install.md does (crd-patch, provisional):
 * each `routability-webhook policy` line runs as written; the file the first
 * writes is what `kubectl apply -f` gets, so it must be complete and ordered
 * (Namespace, params, policies, bindings last); and the policies it holds must
 * follow the CRD: an `External` Gateway the webhook admits is not refused (a
 * pinned experimental policy refused every one, issue 35).
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPolicy } from '../../src/cli/policy.js';
import { GATEWAY_CRD_NAME } from '../../src/crd/patch.js';
import type { GeneratedPolicy } from '../../src/policy/index.js';
import { validateGateway } from '../../src/rules/index.js';
import { FakeApiServer } from '../kit/fake-apiserver.js';
import { storedGatewayCrd } from '../kit/gateway-crd.js';
import { runCli } from '../crd/run-cli.js';
import { baseGateway, context, create, ranges } from '../kit/gateways.js';
import { evaluatePolicy } from '../kit/policy-eval.js';

const MARKER = '<!-- doctest: skip needs a cluster; test/policy/docs-examples.test.ts';
const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'policy.md'), 'utf8');

/** The lines of the sh block right under the marker, comments dropped. */
function exampleLines(): string[] {
  const at = doc.indexOf(MARKER);
  if (at < 0) throw new Error('docs/policy.md: the marked example is gone');
  const block = /```sh\n([\s\S]*?)```/.exec(doc.slice(at))![1]!;
  return block
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

type Obj = { kind: string; metadata: { name: string }; data?: Record<string, string>; spec?: unknown };

describe('docs/policy.md: the first example, as written', () => {
  let api: FakeApiServer;
  const applied: string[] = [];
  beforeAll(async () => {
    api = await FakeApiServer.start();
    api.crds.set(GATEWAY_CRD_NAME, storedGatewayCrd('provisional'));
    api.addRoute((req: IncomingMessage, res, url) => {
      if (req.method !== 'PATCH' || url.pathname.includes('customresourcedefinitions')) return false;
      req.resume();
      req.on('end', () => {
        applied.push(url.pathname);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
      return true;
    });
  });
  afterAll(() => api.close());

  it('has the three lines it explains', () => {
    const lines = exampleLines();
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^routability-webhook policy .*> policy\.yaml$/);
    expect(lines[1]).toBe('kubectl apply -f policy.yaml');
    expect(lines[2]).toMatch(/^routability-webhook policy .*--apply$/);
    // The trap: a pinned revision in the first example.
    expect(lines.join('\n')).not.toContain('--gep-revision');
  });

  it('each line works, and what kubectl apply -f gets follows the CRD and refuses no External Gateway', async () => {
    const [print, kubectl, apply] = exampleLines();
    const env = { KUBECONFIG: api.kubeconfigPath };
    const argv = print!.replace(/^routability-webhook policy /, '').replace(/\s*> policy\.yaml$/, '');
    const printed = await runCli(runPolicy, argv.split(/\s+/), { env });
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stderr).toContain('GEP-5093 revision provisional');
    expect(kubectl).toBe('kubectl apply -f policy.yaml');
    const objects = YAML.parseAllDocuments(printed.stdout).map((d) => d.toJS() as Obj);
    expect(objects.map((o) => o.kind)).toEqual([
      'Namespace',
      'ConfigMap',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
      'ValidatingAdmissionPolicyBinding',
    ]);
    const params = objects[1]!;
    const external = create(
      baseGateway({ spec: [{ type: 'IPAddress', value: '203.0.113.7', routability: 'External' }] }),
    );
    const ctx = context({ ranges: ranges('10.96.0.0/12', 'fd00:10:96::/112'), statusPolicy: 'warn' });
    expect(validateGateway(external, ctx).violations).toEqual([]);
    for (const policy of objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy')) {
      const generated = { policy, binding: {}, rules: [], action: 'deny' } as unknown as GeneratedPolicy;
      expect(evaluatePolicy(generated, external, params).failures, policy.metadata.name).toEqual([]);
    }

    const applyArgv = apply!.replace(/^routability-webhook policy /, '').split(/\s+/);
    const out = await runCli(runPolicy, applyArgv, { env });
    expect(out.code, out.stderr).toBe(0);
    expect(applied).toEqual([
      '/api/v1/namespaces/gateway-routability-webhook',
      '/api/v1/namespaces/gateway-routability-webhook/configmaps/gateway-routability-params',
      '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/gateway-routability-deny',
      '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/gateway-routability-warn',
      '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/gateway-routability-deny',
      '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/gateway-routability-warn',
    ]);
  });
});
