// Every rendered manifest validates against the Kubernetes OpenAPI schemas (kubernetes-models, offline).
// cert-manager and Prometheus Operator resources are not in kubernetes-models: their structure is
// checked by hand against the fields those operators require.
import {
  MutatingWebhookConfiguration,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
  ValidatingWebhookConfiguration,
} from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import {
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
} from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { ciValuesFiles, helmBinary, render, type K8sObject } from './helm.js';

const { skipReason } = helmBinary();
if (skipReason) console.warn(`chart tests skipped: ${skipReason}`);

interface Validatable {
  validate(): void;
}
const models: Record<string, new (data: never) => Validatable> = {
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration': MutatingWebhookConfiguration,
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration': ValidatingWebhookConfiguration,
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy': ValidatingAdmissionPolicy,
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding': ValidatingAdmissionPolicyBinding,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
};

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DURATION = /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/;

/** Checks cert-manager and monitoring CRs by hand; returns the problems found. */
function checkCustomResource(obj: K8sObject): string[] {
  const problems: string[] = [];
  const need = (cond: unknown, what: string) => {
    if (!cond) problems.push(`${obj.kind}/${obj.metadata.name}: ${what}`);
  };
  switch (`${obj.apiVersion}/${obj.kind}`) {
    case 'cert-manager.io/v1/Issuer': {
      const kinds = ['selfSigned', 'ca', 'acme', 'vault', 'venafi'].filter(
        (k) => obj.spec?.[k] !== undefined,
      );
      need(kinds.length === 1, `exactly one issuer type, got ${kinds.join(',') || 'none'}`);
      if (obj.spec?.ca) need(typeof obj.spec.ca.secretName === 'string', 'spec.ca.secretName');
      break;
    }
    case 'cert-manager.io/v1/Certificate': {
      const spec = obj.spec ?? {};
      need(typeof spec.secretName === 'string' && DNS_SUBDOMAIN.test(spec.secretName), 'spec.secretName');
      need(typeof spec.issuerRef?.name === 'string', 'spec.issuerRef.name');
      need(['Issuer', 'ClusterIssuer'].includes(spec.issuerRef?.kind), 'spec.issuerRef.kind');
      need(
        spec.isCA === true || (Array.isArray(spec.dnsNames) && spec.dnsNames.length > 0),
        'dnsNames on a leaf',
      );
      for (const key of ['duration', 'renewBefore']) {
        if (spec[key] !== undefined) need(DURATION.test(spec[key]), `spec.${key} is a Go duration`);
      }
      if (spec.privateKey) {
        need(['RSA', 'ECDSA', 'Ed25519'].includes(spec.privateKey.algorithm), 'privateKey.algorithm');
        if (spec.privateKey.size !== undefined)
          need(Number.isInteger(spec.privateKey.size), 'privateKey.size');
      }
      break;
    }
    case 'monitoring.coreos.com/v1/ServiceMonitor': {
      need(obj.spec?.selector && typeof obj.spec.selector === 'object', 'spec.selector');
      need(Array.isArray(obj.spec?.endpoints) && obj.spec.endpoints.length > 0, 'spec.endpoints');
      for (const ep of obj.spec?.endpoints ?? []) {
        need(typeof ep.port === 'string', 'endpoint port name');
        need(DURATION.test(ep.interval), 'endpoint interval');
      }
      break;
    }
    case 'monitoring.coreos.com/v1/PrometheusRule': {
      need(Array.isArray(obj.spec?.groups) && obj.spec.groups.length > 0, 'spec.groups');
      for (const group of obj.spec?.groups ?? []) {
        need(typeof group.name === 'string', 'group name');
        for (const rule of group.rules ?? []) {
          need(typeof rule.alert === 'string' || typeof rule.record === 'string', 'rule alert/record');
          need(typeof rule.expr === 'string' && rule.expr.length > 0, 'rule expr');
          if (rule.for !== undefined) need(DURATION.test(rule.for), 'rule for');
          for (const v of Object.values({ ...rule.labels, ...rule.annotations }))
            need(typeof v === 'string', 'string labels');
        }
      }
      break;
    }
    default:
      problems.push(`${obj.apiVersion}/${obj.kind}: no schema and no hand check`);
  }
  return problems;
}

const valueSets: Array<[string, string[]]> = [
  ['defaults', []],
  ...ciValuesFiles.map((f): [string, string[]] => [f, [f]]),
];

describe.skipIf(skipReason !== undefined)('rendered manifests validate against Kubernetes schemas', () => {
  it.each(valueSets)('%s', async (_label, valuesFiles) => {
    const docs = await render({ valuesFiles });
    expect(docs.length).toBeGreaterThan(0);
    const seen = new Set<string>();
    for (const doc of docs) {
      const key = `${doc.apiVersion}/${doc.kind}`;
      const id = `${key} ${doc.metadata.name}`;
      expect(seen.has(id), `duplicate ${id}`).toBe(false);
      seen.add(id);
      expect(doc.metadata.name, id).toMatch(DNS_SUBDOMAIN);
      expect(doc.metadata.name.length, id).toBeLessThanOrEqual(253);
      for (const [k, v] of Object.entries(doc.metadata.labels ?? {})) {
        expect(v.length, `${id} label ${k}`).toBeLessThanOrEqual(63);
      }
      const Model = models[key];
      if (Model) {
        expect(() => new Model(doc as never).validate(), id).not.toThrow();
      } else {
        expect(checkCustomResource(doc), id).toEqual([]);
      }
      if (doc.kind === 'Service')
        expect(doc.metadata.name, 'Service names are DNS-1035 labels').toMatch(DNS_LABEL);
    }
  });

  it('the validator does reject a broken manifest (the check can fail)', async () => {
    const docs = await render();
    const dep = docs.find((d) => d.kind === 'Deployment') as K8sObject;
    const broken = structuredClone(dep);
    broken.spec.template.spec.containers[0].lifecycle.preStop.sleep.seconds = '5';
    expect(() => new Deployment(broken as never).validate()).toThrow(/seconds/);
    const cert = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'x' }, spec: {} };
    expect(checkCustomResource(cert as K8sObject).length).toBeGreaterThan(0);
  });
});
