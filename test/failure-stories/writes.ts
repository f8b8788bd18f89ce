/**
 * The Gateway writes every story makes: spec writes a user makes and status
 * writes a Gateway controller makes, inside the service range
 * 10.96.0.0/12 and outside it, one the webhook refuses, a dry run, and one
 * in kube-system (excluded by the chart's namespaceSelector).
 */
import type { Obj, Write } from '../kit/admission-model/types.js';

const INSIDE = '10.96.0.10';
const OUTSIDE = '192.168.7.7';
const PUBLIC = '203.0.113.7';

function gateway(namespace: string, addresses?: Obj[], status?: Obj): Obj {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace },
    spec: {
      gatewayClassName: 'example',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
      ...(addresses ? { addresses } : {}),
    },
    ...(status ? { status } : {}),
  };
}

const ip = (value: string, routability?: string) => ({
  type: 'IPAddress',
  value,
  ...(routability ? { routability } : {}),
});

const USER = { username: 'alice', groups: ['system:authenticated'] };
const CONTROLLER = {
  username: 'system:serviceaccount:gateway-system:controller',
  groups: ['system:serviceaccounts'],
};

function create(label: string, addresses?: Obj[], over: Partial<Write> = {}) {
  const namespace = over.namespace ?? 'apps';
  return {
    label,
    write: {
      operation: 'CREATE',
      namespace,
      name: 'gw',
      object: gateway(namespace, addresses),
      userInfo: USER,
      ...over,
    } as Write,
  };
}

function status(label: string, spec: Obj[], statusAddresses: Obj[]) {
  const old = gateway('apps', spec);
  return {
    label,
    write: {
      operation: 'UPDATE',
      subResource: 'status',
      namespace: 'apps',
      name: 'gw',
      object: gateway('apps', spec, { addresses: statusAddresses }),
      oldObject: old,
      userInfo: CONTROLLER,
    } as Write,
  };
}

export const SPEC_WITHOUT_ROUTABILITY = 'spec: no routability';

/** Labels start with "spec:" or "status:"; the stories group them by that. */
export const WRITES: readonly { label: string; write: Write }[] = [
  create('spec: no addresses'),
  create(SPEC_WITHOUT_ROUTABILITY, [ip(PUBLIC)]),
  create('spec: Cluster inside the range', [ip(INSIDE, 'Cluster')]),
  create('spec: External outside the range', [ip(PUBLIC, 'External')]),
  create('spec: Cluster outside the range (webhook refuses)', [ip(OUTSIDE, 'Cluster')]),
  create('spec: dry run, Cluster inside the range', [ip(INSIDE, 'Cluster')], { dryRun: true }),
  create('spec: kube-system, Cluster outside the range', [ip(OUTSIDE, 'Cluster')], {
    namespace: 'kube-system',
  }),
  {
    label: 'spec: UPDATE adds a Cluster address',
    write: {
      operation: 'UPDATE',
      namespace: 'apps',
      name: 'gw',
      object: gateway('apps', [ip(INSIDE, 'Cluster')]),
      oldObject: gateway('apps'),
      userInfo: USER,
    },
  },
  status('status: address without routability (defaulted)', [ip(PUBLIC, 'External')], [ip(PUBLIC)]),
  status('status: the Cluster address spec requested', [ip(INSIDE, 'Cluster')], [ip(INSIDE, 'Cluster')]),
  status('status: a scope spec did not request (warned)', [ip(PUBLIC, 'External')], [ip(INSIDE, 'Cluster')]),
  status('status: no spec addresses, an assigned address', [], [ip(PUBLIC)]),
];

export const isStatus = (label: string) => label.startsWith('status:');
