// webhook.gepRevision and crdPatch.gepRevision, rendered by the real helm: the server flag, the CRD
// RBAC (one resource name, only with auto), the hook Job's revision, and the schema's refusals.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseServeConfig } from '../../src/config/serve.js';
import { chartDir, FULLNAME, all, helmBinary, one, render, renderError, type K8sObject } from './helm.js';

const { skipReason } = helmBinary();
if (skipReason) console.warn(`chart tests skipped: ${skipReason}`);

const CRD_RULE = {
  apiGroups: ['apiextensions.k8s.io'],
  resources: ['customresourcedefinitions'],
  resourceNames: ['gateways.gateway.networking.k8s.io'],
  verbs: ['list', 'watch'],
};

const serveArgs = (docs: K8sObject[]): string[] =>
  one(docs, 'Deployment').spec.template.spec.containers[0].args as string[];
const jobArgs = (docs: K8sObject[]): string[] =>
  one(docs, 'Job').spec.template.spec.containers[0].args as string[];
const crdRules = (docs: K8sObject[]): unknown[] =>
  all(docs, 'ClusterRole')
    .filter((r) => r.metadata.name === FULLNAME)
    .flatMap((r) => r.rules as { apiGroups: string[] }[])
    .filter((r) => r.apiGroups.includes('apiextensions.k8s.io'));

describe.skipIf(skipReason !== undefined)('webhook.gepRevision', () => {
  it('auto (the default): the server follows the CRD and may read that one CRD, by name only', async () => {
    const docs = await render();
    expect(serveArgs(docs)).toContain('--gep-revision=auto');
    expect(crdRules(docs)).toEqual([CRD_RULE]);
  });

  it.each(['provisional', 'experimental'])('%s: passed to serve; no CRD access', async (revision) => {
    const docs = await render({ set: { 'webhook.gepRevision': revision } });
    expect(serveArgs(docs)).toContain(`--gep-revision=${revision}`);
    const parsed = parseServeConfig(serveArgs(docs).slice(1), {});
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.value.gepRevision).toBe(revision);
    expect(crdRules(docs)).toEqual([]);
  });

  it('auto alone still needs the API (token mounted, role created) when nothing else does', async () => {
    const quiet = {
      'webhook.serviceCIDRs': ['10.96.0.0/12'],
      'webhook.checkAllocatedIPs': false,
      'webhook.audit.interval': '0',
    };
    const auto = await render({ setJson: quiet });
    expect(one(auto, 'ClusterRole').rules).toEqual([CRD_RULE]);
    expect(one(auto, 'Deployment').spec.template.spec.automountServiceAccountToken).toBe(true);
    const fixed = await render({ setJson: { ...quiet, 'webhook.gepRevision': 'provisional' } });
    expect(all(fixed, 'ClusterRole')).toEqual([]);
    expect(one(fixed, 'Deployment').spec.template.spec.automountServiceAccountToken).toBe(false);
  });

  it('the schema refuses anything else', async () => {
    for (const value of ['Auto', 'seed', '']) {
      const err = await renderError({ set: { 'webhook.gepRevision': value } });
      expect(err).toMatch(/gepRevision/);
    }
    expect(await renderError({ set: { 'crdPatch.gepRevision': 'auto' } })).toMatch(/gepRevision/);
  });
});

describe.skipIf(skipReason !== undefined)('the crd-patch hook Job takes its revision from values', () => {
  const cases: [string, Record<string, string>, string][] = [
    ['defaults', {}, 'provisional'],
    ['webhook.gepRevision fixed', { 'webhook.gepRevision': 'experimental' }, 'experimental'],
    ['crdPatch.gepRevision', { 'crdPatch.gepRevision': 'experimental' }, 'experimental'],
    [
      'crdPatch.gepRevision over webhook.gepRevision',
      { 'webhook.gepRevision': 'experimental', 'crdPatch.gepRevision': 'provisional' },
      'provisional',
    ],
  ];
  it.each(cases)('%s', async (_name, set, revision) => {
    const docs = await render({ set, setJson: { 'crdPatch.enabled': true } });
    expect(jobArgs(docs)).toEqual(['crd-patch', '--patch-cluster', `--gep-revision=${revision}`]);
  });
});

describe('NOTES.txt', () => {
  it('names the revision setting and how to see the revision in force', () => {
    const notes = readFileSync(join(chartDir, 'templates', 'NOTES.txt'), 'utf8');
    expect(notes).toContain(
      'GEP-5093 revision: {{ if eq .Values.webhook.gepRevision "auto" }}auto: follows the Gateway CRD',
    );
    expect(notes).toContain("/metrics | grep '^routability_webhook_gep_revision'");
  });
});
