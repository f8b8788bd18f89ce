/**
 * `routability-webhook disarm` (the chart's pre-delete hook) against the fake
 * API server: bindings go first, then webhook configurations, then policies;
 * an object already gone counts as removed; a refused delete is exit 1, no
 * answer exit 2.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { command } from '../../src/cli/disarm.js';
import { FakeApiServer } from '../kit/fake-apiserver.js';
import { runCli } from '../crd/run-cli.js';

const GROUP = 'admissionregistration.k8s.io';
const KINDS = {
  validatingadmissionpolicybindings: 'ValidatingAdmissionPolicyBinding',
  validatingadmissionpolicies: 'ValidatingAdmissionPolicy',
  validatingwebhookconfigurations: 'ValidatingWebhookConfiguration',
  mutatingwebhookconfigurations: 'MutatingWebhookConfiguration',
};

let fake: FakeApiServer;
let deleted: string[];
let refuse: Set<string>;

beforeEach(async () => {
  fake = await FakeApiServer.start();
  deleted = [];
  refuse = new Set();
  for (const [resource, kind] of Object.entries(KINDS)) {
    fake.define(resource, GROUP, kind, ['v1']);
    fake.put(resource, { metadata: { name: 'grw' } });
  }
  fake.addRoute((req, res, url) => {
    const m = /^\/apis\/admissionregistration\.k8s\.io\/v1\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (!m || req.method !== 'DELETE') return false;
    const [resource, name] = [m[1]!, decodeURIComponent(m[2]!)];
    const reply = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (refuse.has(resource))
      reply(403, { kind: 'Status', code: 403, message: `${resource} "${name}" is forbidden` });
    else if (!fake.object(resource, name))
      reply(404, { kind: 'Status', code: 404, message: `${resource} "${name}" not found` });
    else {
      fake.remove(resource, name);
      deleted.push(`${resource}/${name}`);
      reply(200, { kind: 'Status', status: 'Success' });
    }
    return true;
  });
});
afterEach(async () => {
  await fake.close();
});

function disarm(args: readonly string[]) {
  return runCli(command.main, ['--kubeconfig', fake.kubeconfigPath, ...args]);
}

const ALL = [
  '--policy',
  'grw',
  '--mutating-webhook-configuration',
  'grw',
  '--validating-webhook-configuration',
  'grw',
  '--policy-binding',
  'grw',
];

describe('disarm', () => {
  it('deletes bindings, then webhook configurations, then policies, whatever the flag order', async () => {
    const r = await disarm(ALL);
    expect(r.code).toBe(0);
    expect(deleted).toEqual([
      'validatingadmissionpolicybindings/grw',
      'validatingwebhookconfigurations/grw',
      'mutatingwebhookconfigurations/grw',
      'validatingadmissionpolicies/grw',
    ]);
    expect(r.stdout).toContain('validatingadmissionpolicybindings/grw: deleted');
  });

  it('counts an object already gone as removed: a second run after an interrupted one exits 0', async () => {
    await disarm(['--validating-webhook-configuration', 'grw']);
    const again = await disarm(ALL);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('validatingwebhookconfigurations/grw: already gone');
  });

  it('goes on past a refused delete, names it, and exits 1', async () => {
    refuse.add('validatingwebhookconfigurations');
    const r = await disarm(ALL);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^routability-webhook disarm: cannot delete validatingwebhookconfigurations\/grw: HTTP 403 /,
    );
    expect(deleted).toContain('mutatingwebhookconfigurations/grw');
  });

  it('exits 2 when the API server does not answer, and on a usage error', async () => {
    await fake.refuse();
    expect((await disarm(ALL)).code).toBe(2);
    const usage = await disarm([]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('routability-webhook disarm: name at least one object to delete');
  });
});
