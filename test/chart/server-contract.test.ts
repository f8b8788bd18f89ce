// The chart and the server must agree: the arguments the chart renders are parsed by the server's own
// flag parser (src/config/), and the resulting configuration is what the values asked for.
import { describe, expect, it } from 'vitest';
import { CRD_PATCH_FLAGS } from '../../src/cli/crd-patch.js';
import { parseFlags } from '../../src/config/flags.js';
import { parseServeConfig } from '../../src/config/serve.js';
import { helmBinary, one, render, type RenderOptions } from './helm.js';

const { skipReason } = helmBinary();
if (skipReason) console.warn(`chart tests skipped: ${skipReason}`);

async function serveArgs(opts: RenderOptions): Promise<string[]> {
  const docs = await render(opts);
  const args = one(docs, 'Deployment').spec.template.spec.containers[0].args as string[];
  expect(args[0]).toBe('serve');
  return args.slice(1);
}

describe.skipIf(skipReason !== undefined)('chart arguments are accepted by routability-webhook serve', () => {
  it('defaults', async () => {
    const parsed = parseServeConfig(await serveArgs({}), {});
    if (!parsed.ok) throw new Error(parsed.error);
    const config = parsed.value;
    expect(config).toMatchObject({
      port: 8443,
      healthPort: 8080,
      tlsCertFile: '/tls/tls.crt',
      tlsPrivateKeyFile: '/tls/tls.key',
      checkAllocatedIps: true,
      logLevel: 'info',
      shutdownTimeoutSeconds: 10,
      dev: false,
    });
    expect(config.clientCaFile).toBeUndefined();
  });

  it('ci/overrides-values.yaml', async () => {
    const parsed = parseServeConfig(await serveArgs({ valuesFiles: ['overrides-values.yaml'] }), {});
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.value).toMatchObject({
      port: 9443,
      healthPort: 9090,
      clientCaFile: '/client-ca/ca.crt',
      checkAllocatedIps: false,
      logLevel: 'debug',
      shutdownTimeoutSeconds: 20,
      dev: false,
    });
    // The rule settings (ranges, domain, policies, allow-list) reach the engine's configuration.
    expect(parsed.value.serviceCidrs).toEqual(['10.96.0.0/12', 'fd00:10:96::/112']);
    expect(parsed.value.clusterDomain).toBe('corp.internal');
    expect(parsed.value.specPolicy).toBe('warn');
    expect(parsed.value.statusPolicy).toBe('enforce');
    expect([...(parsed.value.allowedRoutability ?? [])]).toEqual(['example.com/CorpWan', 'example.com/Dmz']);
  });

  it('the server rejects what the chart would never render (the check can fail)', () => {
    expect(
      parseServeConfig(['--spec-policy=deny', '--tls-cert-file=/a', '--tls-private-key-file=/b'], {}).ok,
    ).toBe(false);
  });

  it('the CRD patch Job arguments are accepted by routability-webhook crd-patch', async () => {
    const docs = await render({ setJson: { 'crdPatch.enabled': true } });
    const args = one(docs, 'Job').spec.template.spec.containers[0].args as string[];
    expect(args[0]).toBe('crd-patch');
    const parsed = parseFlags(CRD_PATCH_FLAGS, args.slice(1), {});
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.value.flags['patch-cluster']).toBe(true);
    expect(parsed.value.flags['apply']).toBeUndefined();
  });
});
