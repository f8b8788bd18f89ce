// webhook.audit.reports: the flag, and the report verbs in the ClusterRole only when reports are on.
import { describe, expect, it } from 'vitest';
import { helmBinary, one, render, renderError } from './helm.js';

const { skipReason } = helmBinary();

const GATEWAYS = {
  apiGroups: ['gateway.networking.k8s.io'],
  resources: ['gateways'],
  verbs: ['list'],
};

function args(docs: Awaited<ReturnType<typeof render>>): string[] {
  return one(docs, 'Deployment').spec.template.spec.containers[0].args as string[];
}

describe.skipIf(skipReason !== undefined)('webhook.audit.reports', () => {
  it('off by default: no report resource in the ClusterRole', async () => {
    const docs = await render();
    const rules = one(docs, 'ClusterRole').rules as { apiGroups: string[] }[];
    expect(rules).toContainEqual(GATEWAYS);
    expect(rules.flatMap((r) => r.apiGroups)).not.toContain('wgpolicyk8s.io');
    expect(rules.flatMap((r) => r.apiGroups)).not.toContain('openreports.io');
  });

  it.each([
    ['policyreport', 'wgpolicyk8s.io', 'policyreports'],
    ['openreports', 'openreports.io', 'reports'],
  ])(
    '%s: the flag, and list/create on %s %s, update/delete of its one name, only',
    async (mode, group, resource) => {
      const docs = await render({ set: { 'webhook.audit.reports': mode } });
      expect(args(docs)).toContain(`--audit-reports=${mode}`);
      const rules = one(docs, 'ClusterRole').rules as { apiGroups: string[] }[];
      expect(rules).toContainEqual(GATEWAYS);
      expect(rules.filter((r) => r.apiGroups.includes(group))).toEqual([
        { apiGroups: [group], resources: [resource], verbs: ['list', 'create'] },
        {
          apiGroups: [group],
          resources: [resource],
          resourceNames: ['gateway-routability-audit'],
          verbs: ['update', 'delete'],
        },
      ]);
      expect(
        rules.filter((r) => ['wgpolicyk8s.io', 'openreports.io'].includes(r.apiGroups[0]!)),
      ).toHaveLength(2);
    },
  );

  it('with the audit off, neither the flag nor the verbs (nothing would write reports)', async () => {
    const docs = await render({
      set: { 'webhook.audit.interval': '0', 'webhook.audit.reports': 'policyreport' },
    });
    expect(args(docs).some((a) => a.startsWith('--audit-reports'))).toBe(false);
    const rules = one(docs, 'ClusterRole').rules as { apiGroups: string[] }[];
    expect(rules.flatMap((r) => r.apiGroups)).not.toContain('wgpolicyk8s.io');
  });

  it('the schema refuses other values', async () => {
    expect(await renderError({ set: { 'webhook.audit.reports': 'clusterpolicyreport' } })).toMatch(
      /reports.*(must be one of|value must be one of)/s,
    );
  });
});
