/**
 * AdmissionReview bodies shaped like what the apiserver really sends for
 * Gateways: envelope with requestKind/requestResource, userInfo with extra,
 * options, and objects carrying managedFields and kubectl's last-applied
 * annotation. Shared by the benchmark, the fuzzer and the reliability tests.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export type PayloadName = 'create-small' | 'update-large' | 'status-mutate';

export interface BenchPayload {
  readonly name: PayloadName;
  readonly path: '/validate' | '/mutate';
  readonly description: string;
  readonly review: JsonObject;
  /** The review serialised once, as sent. */
  readonly body: string;
}

const GROUP = 'gateway.networking.k8s.io';
const GVK = { group: GROUP, version: 'v1', kind: 'Gateway' };
const GVR = { group: GROUP, version: 'v1', resource: 'gateways' };
const CREATED = '2025-11-20T10:15:42Z';

/** A deterministic UUID-looking uid: the apiserver sends a v4 UUID. */
export function uidFor(n: number): string {
  const hex = (n >>> 0).toString(16).padStart(8, '0');
  return `${hex}-5e1d-4c1e-9a7b-0b6f${hex.slice(0, 4)}c0de`;
}

function kubectlUser(): JsonObject {
  return {
    username: 'kubernetes-admin',
    groups: ['kubeadm:cluster-admins', 'system:authenticated'],
    extra: {
      'authentication.kubernetes.io/credential-id': [
        'X509SHA256=4f0d8b7c1e2a93d5b6c7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f901a2b3c4',
      ],
    },
  };
}

function controllerUser(): JsonObject {
  return {
    username: 'system:serviceaccount:gateway-system:gateway-controller',
    uid: '8c5a3b1e-2f4d-4e6a-9b8c-7d6e5f4a3b2c',
    groups: ['system:serviceaccounts', 'system:serviceaccounts:gateway-system', 'system:authenticated'],
    extra: {
      'authentication.kubernetes.io/credential-id': ['JTI=0d9c8b7a-6f5e-4d3c-2b1a-0f9e8d7c6b5a'],
      'authentication.kubernetes.io/node-name': ['worker-2'],
      'authentication.kubernetes.io/node-uid': ['3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7'],
      'authentication.kubernetes.io/pod-name': ['gateway-controller-7d9f8c6b5-x2lqp'],
      'authentication.kubernetes.io/pod-uid': ['9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d'],
    },
  };
}

interface Shape {
  readonly name: string;
  readonly namespace: string;
  readonly listeners: number;
  readonly addresses: number;
  readonly generation: number;
  /** Changes the object slightly, as an edit would. */
  readonly revision: number;
}

function addressesFor(count: number): JsonObject[] {
  const out: JsonObject[] = [];
  for (let i = 0; i < count; i++) {
    switch (i % 4) {
      case 0:
        out.push({ type: 'IPAddress', value: `10.96.${10 + i}.${20 + i}`, routability: 'Cluster' });
        break;
      case 1:
        out.push({ type: 'IPAddress', value: `203.0.113.${10 + i}`, routability: 'External' });
        break;
      case 2:
        out.push({ type: 'Hostname', value: `gw-${i}.example.com`, routability: 'External' });
        break;
      default:
        out.push({
          type: 'IPAddress',
          value: `fd00:10:96::${(0xa0 + i).toString(16)}`,
          routability: 'Cluster',
        });
    }
  }
  return out;
}

function listenersFor(count: number, revision: number): JsonObject[] {
  const out: JsonObject[] = [];
  for (let i = 0; i < count; i++) {
    const https = i % 2 === 1;
    out.push({
      name: https ? `https-${i}` : `http-${i}`,
      protocol: https ? 'HTTPS' : 'HTTP',
      port: https ? 443 : 80 + (i === 0 ? 0 : 8000 + i),
      hostname: `app-${i}.r${revision}.example.com`,
      allowedRoutes:
        i % 4 === 3
          ? {
              namespaces: {
                from: 'Selector',
                selector: { matchLabels: { 'gateway-access': `team-${i % 5}` } },
              },
            }
          : { namespaces: { from: 'Same' } },
      ...(https
        ? {
            tls: {
              mode: 'Terminate',
              certificateRefs: [{ group: '', kind: 'Secret', name: `app-${i}-tls` }],
            },
          }
        : {}),
    });
  }
  return out;
}

function specFor(shape: Shape): JsonObject {
  return {
    gatewayClassName: 'example-gateway-class',
    addresses: addressesFor(shape.addresses),
    listeners: listenersFor(shape.listeners, shape.revision),
    infrastructure: { labels: { 'app.kubernetes.io/part-of': 'shop' } },
  };
}

function fieldsV1Spec(shape: Shape): JsonObject {
  const listeners: JsonObject = {};
  for (let i = 0; i < shape.listeners; i++) {
    const https = i % 2 === 1;
    listeners[`k:{"name":"${https ? 'https' : 'http'}-${i}"}`] = {
      '.': {},
      'f:allowedRoutes': {
        '.': {},
        'f:namespaces': { '.': {}, 'f:from': {}, ...(i % 4 === 3 ? { 'f:selector': {} } : {}) },
      },
      'f:hostname': {},
      'f:name': {},
      'f:port': {},
      'f:protocol': {},
      ...(https ? { 'f:tls': { '.': {}, 'f:certificateRefs': {}, 'f:mode': {} } } : {}),
    };
  }
  return {
    'f:metadata': {
      'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
      'f:labels': { '.': {}, 'f:app.kubernetes.io/name': {}, 'f:team': {} },
    },
    'f:spec': {
      '.': {},
      'f:addresses': {},
      'f:gatewayClassName': {},
      'f:infrastructure': { '.': {}, 'f:labels': { '.': {}, 'f:app.kubernetes.io/part-of': {} } },
      'f:listeners': { '.': {}, ...listeners },
    },
  };
}

function statusFor(shape: Shape, withRoutability: boolean): JsonObject {
  const now = '2025-11-20T10:16:03Z';
  const addresses = addressesFor(Math.min(shape.addresses, 4)).map((a): JsonObject => {
    if (withRoutability) return a;
    const { routability: _dropped, ...rest } = a;
    return rest;
  });
  const condition = (type: string, reason: string, message: string) => ({
    type,
    status: 'True',
    reason,
    message,
    observedGeneration: shape.generation,
    lastTransitionTime: now,
  });
  return {
    addresses,
    conditions: [
      condition('Accepted', 'Accepted', 'Resource accepted'),
      condition('Programmed', 'Programmed', 'Resource programmed, assigned to service(s) shop/gw-proxy'),
      condition('AddressesAssigned', 'Assigned', 'All requested addresses assigned'),
    ],
    listeners: Array.from({ length: shape.listeners }, (_, i) => ({
      name: i % 2 === 1 ? `https-${i}` : `http-${i}`,
      attachedRoutes: i % 3,
      supportedKinds: [{ group: GROUP, kind: 'HTTPRoute' }],
      conditions: [condition('Programmed', 'Programmed', 'Listener programmed')],
    })),
  };
}

function gatewayObject(shape: Shape, opts: { status: JsonObject | undefined; created: boolean }): JsonObject {
  const spec = specFor(shape);
  const labels = { 'app.kubernetes.io/name': shape.name, team: `shop-r${shape.revision}` };
  const lastApplied = {
    apiVersion: `${GROUP}/v1`,
    kind: 'Gateway',
    metadata: { annotations: {}, labels, name: shape.name, namespace: shape.namespace },
    spec,
  };
  const managedFields: JsonObject[] = [
    {
      manager: 'kubectl-client-side-apply',
      operation: 'Update',
      apiVersion: `${GROUP}/v1`,
      time: CREATED,
      fieldsType: 'FieldsV1',
      fieldsV1: fieldsV1Spec(shape),
    },
  ];
  if (opts.status) {
    managedFields.push({
      manager: 'gateway-controller',
      operation: 'Update',
      apiVersion: `${GROUP}/v1`,
      time: '2025-11-20T10:16:03Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': { 'f:addresses': {}, 'f:conditions': {}, 'f:listeners': {} } },
      subresource: 'status',
    });
  }
  const metadata: JsonObject = {
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(lastApplied)}\n` },
    labels,
    name: shape.name,
    namespace: shape.namespace,
    generation: shape.generation,
    managedFields,
    creationTimestamp: CREATED,
  };
  if (!opts.created) {
    metadata['uid'] = '5b7e2c1a-9d8f-4e3b-a6c5-1f2e3d4c5b6a';
    metadata['resourceVersion'] = String(184_220 + shape.revision);
  }
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'Gateway',
    metadata,
    spec,
    ...(opts.status ? { status: opts.status } : {}),
  };
}

/** Every review is a fresh tree (the fuzzer mutates them in place). */
function envelope(request: JsonObject): JsonObject {
  return structuredClone({ kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1', request });
}

/** kubectl apply of a new, small Gateway: 2 listeners, 2 addresses (~3 KB). */
export function createSmallReview(uid = uidFor(1)): JsonObject {
  const shape: Shape = {
    name: 'shop',
    namespace: 'shop',
    listeners: 2,
    addresses: 2,
    generation: 1,
    revision: 1,
  };
  return envelope({
    uid,
    kind: GVK,
    resource: GVR,
    requestKind: GVK,
    requestResource: GVR,
    name: shape.name,
    namespace: shape.namespace,
    operation: 'CREATE',
    userInfo: kubectlUser(),
    object: gatewayObject(shape, { status: undefined, created: true }),
    oldObject: null,
    dryRun: false,
    options: {
      kind: 'CreateOptions',
      apiVersion: 'meta.k8s.io/v1',
      fieldManager: 'kubectl-client-side-apply',
      fieldValidation: 'Strict',
    },
  });
}

/** kubectl apply changing a large Gateway: 16 addresses, 16 listeners, with oldObject (~30 KB). */
export function updateLargeReview(uid = uidFor(2)): JsonObject {
  const base = { name: 'edge', namespace: 'platform', listeners: 16, addresses: 16 };
  const oldShape: Shape = { ...base, generation: 6, revision: 6 };
  const newShape: Shape = { ...base, generation: 6, revision: 7 };
  return envelope({
    uid,
    kind: GVK,
    resource: GVR,
    requestKind: GVK,
    requestResource: GVR,
    name: base.name,
    namespace: base.namespace,
    operation: 'UPDATE',
    userInfo: kubectlUser(),
    object: gatewayObject(newShape, { status: statusFor(oldShape, true), created: false }),
    oldObject: gatewayObject(oldShape, { status: statusFor(oldShape, true), created: false }),
    dryRun: false,
    options: {
      kind: 'UpdateOptions',
      apiVersion: 'meta.k8s.io/v1',
      fieldManager: 'kubectl-client-side-apply',
      fieldValidation: 'Strict',
    },
  });
}

/**
 * A controller writing `gateways/status` without routability (it predates
 * the field): the mutating webhook defaults 4 addresses to External.
 */
export function statusUpdateReview(uid = uidFor(3)): JsonObject {
  const shape: Shape = {
    name: 'edge',
    namespace: 'platform',
    listeners: 4,
    addresses: 4,
    generation: 3,
    revision: 3,
  };
  const previous = statusFor(shape, false);
  const next = statusFor(shape, false);
  return envelope({
    uid,
    kind: GVK,
    resource: GVR,
    subResource: 'status',
    requestKind: GVK,
    requestResource: GVR,
    requestSubResource: 'status',
    name: shape.name,
    namespace: shape.namespace,
    operation: 'UPDATE',
    userInfo: controllerUser(),
    object: gatewayObject(shape, { status: next, created: false }),
    oldObject: gatewayObject(shape, { status: { ...previous, addresses: [] }, created: false }),
    dryRun: false,
    options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'gateway-controller' },
  });
}

export const PAYLOAD_BUILDERS: Readonly<Record<PayloadName, (uid?: string) => JsonObject>> = {
  'create-small': createSmallReview,
  'update-large': updateLargeReview,
  'status-mutate': statusUpdateReview,
};

export const PAYLOAD_PATHS: Readonly<Record<PayloadName, '/validate' | '/mutate'>> = {
  'create-small': '/validate',
  'update-large': '/validate',
  'status-mutate': '/mutate',
};

const DESCRIPTIONS: Readonly<Record<PayloadName, string>> = {
  'create-small': 'CREATE of a small Gateway (2 listeners, 2 addresses) → /validate',
  'update-large': 'UPDATE of a Gateway with 16 addresses, 16 listeners, oldObject → /validate',
  'status-mutate': 'gateways/status UPDATE, 4 addresses without routability → /mutate',
};

export function benchPayloads(): BenchPayload[] {
  return (Object.keys(PAYLOAD_BUILDERS) as PayloadName[]).map((name) => {
    const review = PAYLOAD_BUILDERS[name]();
    return {
      name,
      path: PAYLOAD_PATHS[name],
      description: DESCRIPTIONS[name],
      review,
      body: JSON.stringify(review),
    };
  });
}
