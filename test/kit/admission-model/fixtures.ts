/** Builders for the model's own tests: one Gateway, writes of it, one webhook entry, one policy. */
import { Cluster } from './cluster.js';
import type { Obj, Write } from './types.js';

export const SERVICE = { name: 'hook', namespace: 'hooks' } as const;

export function gateway(
  over: { labels?: Record<string, string>; addresses?: Obj[]; status?: Obj } = {},
): Obj {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'apps', ...(over.labels ? { labels: over.labels } : {}) },
    spec: {
      gatewayClassName: 'example',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
      ...(over.addresses ? { addresses: over.addresses } : {}),
    },
    ...(over.status ? { status: over.status } : {}),
  };
}

export const createOf = (object: Obj = gateway(), over: Partial<Write> = {}): Write => ({
  operation: 'CREATE',
  namespace: 'apps',
  name: 'gw',
  object,
  userInfo: { username: 'alice', groups: ['dev'] },
  ...over,
});

export const statusOf = (object: Obj, oldObject: Obj = gateway(), over: Partial<Write> = {}): Write => ({
  operation: 'UPDATE',
  subResource: 'status',
  namespace: 'apps',
  name: 'gw',
  object,
  oldObject,
  userInfo: { username: 'system:serviceaccount:gw:controller' },
  ...over,
});

/** A cluster with the namespaces `apps` (team=web) and `hooks`, on top of the default ones. */
export function baseCluster(): Cluster {
  const c = Cluster.fresh();
  c.addNamespace('apps', { team: 'web' });
  c.addNamespace('hooks');
  return c;
}

export function webhookEntry(over: Obj = {}): Obj {
  return {
    name: 'check.example.io',
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    timeoutSeconds: 2,
    rules: [
      {
        apiGroups: ['gateway.networking.k8s.io'],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['gateways', 'gateways/status'],
        scope: 'Namespaced',
      },
    ],
    clientConfig: { service: { ...SERVICE, path: '/validate', port: 443 } },
    ...over,
  };
}

export function configuration(kind: 'Validating' | 'Mutating', name: string, webhooks: Obj[]): Obj {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks,
  };
}

export function policy(name: string, spec: Obj): Obj {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: ['gateway.networking.k8s.io'],
            apiVersions: ['*'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['gateways', 'gateways/status'],
          },
        ],
      },
      ...spec,
    },
  };
}

export function binding(name: string, policyName: string, spec: Obj = {}): Obj {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName, validationActions: ['Deny'], ...spec },
  };
}

export function configMap(namespace: string, name: string, data: Record<string, string>, labels = {}): Obj {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data };
}
