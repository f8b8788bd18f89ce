/**
 * `routability-webhook verify` against the fake API server, whose Gateway
 * writes run through the real webhook app (test/kit/fake-admission.ts):
 * a healthy setup passes, and each broken setup of the issue fails the step
 * it breaks, with the troubleshooting wording, and exit 1 (2 when the API
 * server does not answer).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { command } from '../../src/cli/verify.js';
import { GATEWAY_CRD_NAME } from '../../src/crd/patch.js';
import { FakeApiServer, gateway } from '../kit/fake-apiserver.js';
import {
  denyingWebhook,
  installDryRunAdmission,
  realWebhook,
  unreachableWebhook,
  type FakeWebhook,
} from '../kit/fake-admission.js';
import { asStored, gatewayCrdWith } from '../kit/gateway-crd.js';
import { runCli } from '../crd/run-cli.js';

let fake: FakeApiServer;

beforeEach(async () => {
  fake = await FakeApiServer.start();
  fake.crds.set(GATEWAY_CRD_NAME, asStored(gatewayCrdWith('provisional')));
});
afterEach(async () => {
  await fake.close();
});

async function verify(args: readonly string[] = []) {
  const { code, stdout, stderr } = await runCli(command.main, [
    '--kubeconfig',
    fake.kubeconfigPath,
    '--namespace',
    'apps',
    ...args,
  ]);
  const lines = stdout.trimEnd().split('\n');
  return {
    code,
    lines,
    stderr,
    line: (step: string) => lines.find((l) => l.includes(` ${step}: `)) ?? '',
  };
}

function withWebhooks(...webhooks: FakeWebhook[]): void {
  installDryRunAdmission(fake, webhooks);
}

describe('verify on a working setup', () => {
  it('proves every step, and says the status path is not proven without a Gateway to update', async () => {
    withWebhooks(realWebhook());
    const r = await verify();
    expect(r.line('crd')).toMatch(/^ok crd: .*carries routability in every served version: provisional/);
    expect(r.line('admitted')).toMatch(/^ok admitted: .*kept routability Cluster/);
    expect(r.line('denied')).toBe(
      'ok denied: denied by validate.routability.gateway.networking.k8s.io with the documented message',
    );
    expect(r.line('status')).toMatch(/^not proven status: no Gateway in apps/);
    expect(r.lines.at(-1)).toMatch(/^verify: 3 ok, 0 failed, 1 not proven/);
    expect(r.code).toBe(0);
  });

  it('proves the status path with a dry-run status update of a stored Gateway, and stores nothing', async () => {
    withWebhooks(realWebhook());
    fake.put(
      'gateways',
      gateway('apps', 'web', { spec: [{ type: 'IPAddress', value: '10.96.0.20', routability: 'Cluster' }] }),
    );
    const r = await verify();
    expect(r.line('status')).toMatch(/^ok status: a dry-run status update of gateway apps\/web was answered/);
    expect(r.code).toBe(0);
    const writes = fake.requests.filter((q) => q.method !== 'GET');
    expect(writes.length).toBe(3);
    expect(writes.every((q) => q.query['dryRun'] === 'All')).toBe(true);
  });

  it('names its probes with generateName: a stored Gateway of any name never makes a create fail', async () => {
    withWebhooks(realWebhook());
    fake.put('gateways', gateway('apps', 'routability-verify-admitted', {}));
    fake.put('gateways', gateway('apps', 'routability-verify-denied', {}));
    const r = await verify();
    expect(r.line('admitted')).toMatch(/^ok admitted: /);
    expect(r.line('denied')).toMatch(/^ok denied: /);
  });

  it('under --spec-policy warn expects the documented warning instead of a denial', async () => {
    withWebhooks(realWebhook(undefined, { specPolicy: 'warn' }));
    const r = await verify(['--spec-policy', 'warn']);
    expect(r.line('denied')).toBe('ok denied: admitted with the documented warning (--spec-policy warn)');
    expect(r.code).toBe(0);
    // The same webhook, verified as if it enforced: the probe was admitted.
    const enforce = await verify();
    expect(enforce.line('denied')).toMatch(
      /^FAILED denied: .*was admitted in apps: the webhook was not called/,
    );
    expect(enforce.code).toBe(1);
  });
});

describe('verify fails on each broken setup', () => {
  it('a Gateway CRD without routability (the field is pruned)', async () => {
    withWebhooks(realWebhook());
    fake.crds.set(GATEWAY_CRD_NAME, asStored(gatewayCrdWith('none')));
    const r = await verify();
    expect(r.line('crd')).toMatch(
      /^FAILED crd: .*has no routability field in v1, v1beta1: the Gateway CRD lacks the field/,
    );
    expect(r.line('admitted')).toMatch(
      /^FAILED admitted: a dry-run create was admitted but routability was dropped: .*Apply the CRD patch/,
    );
    expect(r.line('denied')).toMatch(/^FAILED denied: .*was admitted/);
    expect(r.code).toBe(1);
  });

  it('a wrong caBundle: the API server cannot call the webhook (failurePolicy Fail)', async () => {
    const name = 'validate.routability.gateway.networking.k8s.io';
    withWebhooks(
      unreachableWebhook(
        name,
        'tls: failed to verify certificate: x509: certificate signed by unknown authority',
      ),
    );
    fake.put('gateways', gateway('apps', 'web', {}));
    const r = await verify();
    for (const step of ['admitted', 'denied', 'status'])
      expect(r.line(step)).toMatch(
        new RegExp(
          `^FAILED ${step}: Internal error occurred: failed calling webhook "${name.replaceAll('.', '\\.')}": .*x509: certificate signed by unknown authority: caBundle is not the CA that signed the served certificate: `,
        ),
      );
    expect(r.code).toBe(1);
  });

  it('an unreachable webhook: no ready replica', async () => {
    withWebhooks(
      unreachableWebhook('validate.routability.gateway.networking.k8s.io', 'context deadline exceeded'),
    );
    const r = await verify();
    expect(r.line('admitted')).toMatch(
      /context deadline exceeded: no ready replica reachable in timeoutSeconds/,
    );
    expect(r.code).toBe(1);
  });

  it('a denial by another webhook, not by this one', async () => {
    withWebhooks(denyingWebhook('gatekeeper.example.com', 'no Gateways on Fridays'), realWebhook());
    const r = await verify();
    expect(r.line('denied')).toBe(
      'FAILED denied: denied, but not by validate.routability.gateway.networking.k8s.io: "admission webhook "gatekeeper.example.com" denied the request: no Gateways on Fridays" (another webhook or policy answered; is validate.routability.gateway.networking.k8s.io the configured validatingWebhook.name?)',
    );
    expect(r.line('admitted')).toMatch(
      /^FAILED admitted: a valid Gateway .* was refused: admission webhook "gatekeeper/,
    );
    expect(r.code).toBe(1);
  });

  it('a webhook that is configured under another name than verify expects', async () => {
    withWebhooks(realWebhook('validate.routability.example.com'));
    const r = await verify();
    expect(r.line('denied')).toMatch(
      /^FAILED denied: denied, but not by validate\.routability\.gateway\.networking\.k8s\.io/,
    );
    const named = await verify(['--webhook-name', 'validate.routability.example.com']);
    expect(named.code).toBe(0);
  });

  it('a webhook that does not select the namespace', async () => {
    withWebhooks({ ...realWebhook(), namespaces: ['other'] });
    const r = await verify();
    expect(r.line('denied')).toMatch(
      /^FAILED denied: .*was admitted in apps: the webhook was not called \(no configuration, the namespace not selected/,
    );
    expect(r.code).toBe(1);
  });
});

describe('verify in policy mode', () => {
  const ADMISSION = 'admissionregistration.k8s.io';
  beforeEach(() => {
    fake.define('validatingadmissionpolicies', ADMISSION, 'ValidatingAdmissionPolicy', ['v1']);
    fake.define('validatingadmissionpolicybindings', ADMISSION, 'ValidatingAdmissionPolicyBinding', ['v1']);
    fake.put('validatingadmissionpolicies', { metadata: { name: 'grw-deny' }, spec: {} });
    fake.put('validatingadmissionpolicybindings', {
      metadata: { name: 'grw-deny' },
      spec: {
        policyName: 'grw-deny',
        validationActions: ['Deny'],
        paramRef: { name: 'grw-params', namespace: 'gateway-routability', parameterNotFoundAction: 'Deny' },
      },
    });
    withWebhooks(realWebhook());
  });

  function serveParams(data: Record<string, string> | undefined): void {
    fake.addRoute((req, res, url) => {
      if (url.pathname !== '/api/v1/namespaces/gateway-routability/configmaps/grw-params') return false;
      const found = data !== undefined;
      res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          found
            ? { metadata: { name: 'grw-params' }, data }
            : { kind: 'Status', code: 404, message: 'configmaps "grw-params" not found' },
        ),
      );
      return true;
    });
  }

  it('passes with the binding, its policy and params that carry service ranges', async () => {
    serveParams({ serviceCIDRs: '10.96.0.0/12', terminatingCIDRs: '' });
    const r = await verify(['--policy-binding', 'grw-deny']);
    expect(r.line('policy grw-deny')).toBe(
      'ok policy grw-deny: binding grw-deny binds grw-deny with params configmap gateway-routability/grw-params (serviceCIDRs 10.96.0.0/12)',
    );
    expect(r.code).toBe(0);
  });

  it('fails when the params ConfigMap is missing', async () => {
    serveParams(undefined);
    const r = await verify(['--policy-binding', 'grw-deny']);
    expect(r.line('policy grw-deny')).toMatch(
      /^FAILED policy grw-deny: the params configmap gateway-routability\/grw-params of binding grw-deny do not exist: without it the binding is skipped/,
    );
    expect(r.code).toBe(1);
  });

  it('fails when the params carry no service ranges', async () => {
    serveParams({ serviceCIDRs: '' });
    const r = await verify(['--policy-binding', 'grw-deny']);
    expect(r.line('policy grw-deny')).toMatch(/have no serviceCIDRs/);
    expect(r.code).toBe(1);
  });

  it('fails when the binding or its policy is missing', async () => {
    serveParams({ serviceCIDRs: '10.96.0.0/12' });
    const r = await verify(['--policy-binding', 'grw-warn']);
    expect(r.line('policy grw-warn')).toBe(
      'FAILED policy grw-warn: validatingadmissionpolicybinding grw-warn not found: Gateways are not checked by it',
    );
    fake.remove('validatingadmissionpolicies', 'grw-deny');
    const gone = await verify(['--policy-binding', 'grw-deny']);
    expect(gone.line('policy grw-deny')).toMatch(
      /binds validatingadmissionpolicy grw-deny, which does not exist/,
    );
  });
});

describe('verify usage and reachability', () => {
  it('exits 2 when the API server does not answer', async () => {
    await fake.refuse();
    const r = await verify();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^routability-webhook verify: no answer from http:\/\/127\.0\.0\.1:\d+: /);
  });

  it('exits 2 on a usage error', async () => {
    const r = await verify(['--no-webhook']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--no-webhook needs at least one --policy-binding/);
  });

  it('says so when its credentials may not create Gateways', async () => {
    fake.addRoute((req, res, url) => {
      if (req.method !== 'POST' || !url.pathname.endsWith('/gateways')) return false;
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          code: 403,
          reason: 'Forbidden',
          message:
            'gateways.gateway.networking.k8s.io is forbidden: User "x" cannot create resource "gateways"',
        }),
      );
      return true;
    });
    // Routes are tried in order: RBAC refuses before admission runs.
    withWebhooks(realWebhook());
    const r = await verify();
    expect(r.line('admitted')).toMatch(
      /^FAILED admitted: forbidden: .*verify needs create on gateways in namespace apps \(sent as dry runs\)/,
    );
  });
});
