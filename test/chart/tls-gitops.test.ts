/**
 * A GitOps tool renders the chart without a cluster (Argo CD cannot `lookup`). The supported mode
 * there is certManager (docs/operations.md § Certificate lifetimes): its render carries no key
 * material and is the same on every render, so a sync never replaces the CA under the apiserver.
 * helm mode, rendered that way, makes a new CA each time: the reason it is not the GitOps mode.
 */
import { describe, expect, it } from 'vitest';
import { helm, helmBinary, templateArgs } from './helm.js';

const { skipReason } = helmBinary();

async function renderText(args: string[]): Promise<string> {
  const r = await helm(templateArgs({ extraArgs: args }));
  if (r.code !== 0) throw new Error(r.stderr);
  return r.stdout;
}

describe.skipIf(skipReason !== undefined)('TLS modes rendered without a cluster', () => {
  it('certManager renders the same every time, with no key material', async () => {
    const args = ['--set', 'tls.mode=certManager'];
    const [a, b] = [await renderText(args), await renderText(args)];
    expect(a).toBe(b);
    expect(a).not.toMatch(/BEGIN|caBundle:|kind: Secret/);
  });

  it('helm mode without lookup makes a new CA on every render', async () => {
    const [a, b] = [await renderText([]), await renderText([])];
    const ca = (t: string) => /ca\.crt: (\S+)/.exec(t)![1];
    expect(ca(a)).not.toBe(ca(b));
  });
});
