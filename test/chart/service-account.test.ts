// serviceAccount.create=false must name an existing ServiceAccount: the chart refuses to run the pods
// as, and bind its Roles to, the namespace's "default" ServiceAccount.
import { describe, expect, it } from 'vitest';
import { all, FULLNAME, helmBinary, one, render, renderError } from './helm.js';

const { skipReason } = helmBinary();

type Subject = { kind: string; name: string; namespace: string };

function boundAccounts(docs: Awaited<ReturnType<typeof render>>): string[] {
  return [...all(docs, 'ClusterRoleBinding'), ...all(docs, 'RoleBinding')]
    .filter((b) => !String(b.metadata.name).includes('crd-patch'))
    .flatMap((b) => (b.subjects as Subject[]).map((s) => s.name));
}

describe.skipIf(skipReason !== undefined)('serviceAccount', () => {
  it('create=false without a name is refused with the reason', async () => {
    const stderr = await renderError({ setJson: { 'serviceAccount.create': false } });
    expect(stderr).toContain('serviceAccount.create=false needs serviceAccount.name');
    expect(stderr).toContain("namespace's default ServiceAccount");
  });

  it('create=false with a name: no ServiceAccount rendered; the pods and every binding use that name', async () => {
    const docs = await render({
      setJson: { 'serviceAccount.create': false, 'policy.enabled': true },
      set: { 'serviceAccount.name': 'platform-webhook' },
    });
    expect(all(docs, 'ServiceAccount').map((s) => s.metadata.name)).not.toContain('platform-webhook');
    expect(one(docs, 'Deployment').spec.template.spec.serviceAccountName).toBe('platform-webhook');
    const bound = boundAccounts(docs);
    expect(bound.length).toBeGreaterThanOrEqual(3);
    expect(new Set(bound)).toEqual(new Set(['platform-webhook']));
  });

  it('create=true (the default): the chart makes and binds its own', async () => {
    const docs = await render();
    expect(one(docs, 'ServiceAccount', FULLNAME).automountServiceAccountToken).toBe(false);
    expect(one(docs, 'Deployment').spec.template.spec.serviceAccountName).toBe(FULLNAME);
    expect(new Set(boundAccounts(docs))).toEqual(new Set([FULLNAME]));
  });

  it('the policy alone (webhook.enabled=false) needs no ServiceAccount, so no name either', async () => {
    const docs = await render({
      setJson: {
        'webhook.enabled': false,
        'policy.enabled': true,
        'policy.serviceCIDRs': ['10.96.0.0/12'],
        'serviceAccount.create': false,
      },
    });
    expect(all(docs, 'ServiceAccount')).toEqual([]);
    expect(all(docs, 'Deployment')).toEqual([]);
  });
});
