/**
 * AdmissionReview envelopes for a Gateway as the apiserver sends them (request
 * and resource kinds, user, dryRun), for tests that post reviews to a server.
 */
const GVK = { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' };
const GVR = { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways' };

export interface GatewayReviewRequest {
  readonly uid: string;
  readonly object: unknown;
  /** CREATE unless said. */
  readonly operation?: 'CREATE' | 'UPDATE' | 'DELETE';
  /** null unless said (the apiserver sends null on CREATE). */
  readonly oldObject?: unknown;
  readonly subResource?: string;
}

/** The review of the Gateway `default/gw`. */
export function gatewayReview(r: GatewayReviewRequest) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: r.uid,
      kind: GVK,
      resource: GVR,
      requestKind: GVK,
      requestResource: GVR,
      ...(r.subResource ? { subResource: r.subResource, requestSubResource: r.subResource } : {}),
      name: 'gw',
      namespace: 'default',
      operation: r.operation ?? 'CREATE',
      userInfo: { username: 'tester' },
      object: r.object,
      oldObject: r.oldObject ?? null,
      dryRun: false,
    },
  };
}

/** The Gateway `default/gw` with these spec addresses (and status addresses, when given). */
export function defaultGateway(spec: unknown[], status?: unknown[]) {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'default' },
    spec: {
      gatewayClassName: 'example',
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
      addresses: spec,
    },
    ...(status ? { status: { addresses: status } } : {}),
  };
}
