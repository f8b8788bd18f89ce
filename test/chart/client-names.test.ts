// webhook.clientCA.allowedNames: rendered as --client-allowed-names with the client CA, accepted by the
// server's own flag parser; refused without a client CA, and a name the server would refuse is refused.
import { describe, expect, it } from 'vitest';
import { parseServeConfig } from '../../src/config/serve.js';
import { helmBinary, one, render, renderError } from './helm.js';

const { skipReason } = helmBinary();

describe.skipIf(skipReason !== undefined)('webhook.clientCA.allowedNames', () => {
  it('renders --client-allowed-names beside --client-ca-file, and serve reads the same names', async () => {
    const docs = await render({
      set: { 'webhook.clientCA.configMapName': 'apiserver-client-ca' },
      setJson: { 'webhook.clientCA.allowedNames': ['kube-apiserver', 'Webhook-Client.example'] },
    });
    const args = one(docs, 'Deployment').spec.template.spec.containers[0].args as string[];
    expect(args).toContain('--client-allowed-names=kube-apiserver,Webhook-Client.example');
    const parsed = parseServeConfig(args.slice(1), {});
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.value.clientCaFile).toBe('/client-ca/ca.crt');
    expect(parsed.value.clientAllowedNames).toEqual(['kube-apiserver', 'webhook-client.example']);
  });

  it('empty (the default): no flag, any certificate the CA signed', async () => {
    const docs = await render({ set: { 'webhook.clientCA.configMapName': 'apiserver-client-ca' } });
    const args = one(docs, 'Deployment').spec.template.spec.containers[0].args as string[];
    expect(args.some((a) => a.startsWith('--client-allowed-names'))).toBe(false);
  });

  it('refused without webhook.clientCA.configMapName, saying why', async () => {
    expect(await renderError({ setJson: { 'webhook.clientCA.allowedNames': ['kube-apiserver'] } })).toContain(
      'webhook.clientCA.allowedNames needs webhook.clientCA.configMapName',
    );
  });

  it.each([['kube apiserver'], ['a,b'], ['']])('the schema refuses the name %j', async (name) => {
    expect(
      await renderError({
        set: { 'webhook.clientCA.configMapName': 'ca' },
        setJson: { 'webhook.clientCA.allowedNames': [name] },
      }),
    ).toMatch(/allowedNames/);
  });
});
