/** What the engine reviews: an admission request on a Gateway, with both objects read once. */
import { readGateway, type GatewayView } from './gateway.js';
import type { GatewayRequest } from './types.js';

export interface GatewayReview {
  readonly operation: string;
  /** `''` for the main resource, `status` for the status subresource. */
  readonly subResource: string;
  readonly gateway: GatewayView;
  /** The stored object on UPDATE; an empty view otherwise. */
  readonly old: GatewayView;
  /** Namespace and name: the object's metadata, else the request's. */
  readonly identity: { readonly namespace: string; readonly name: string };
}

const EMPTY = readGateway(undefined);

/** Reads the request's objects once; the rules, the webhook adapter and `check` share the result. */
export function reviewOf(
  request: GatewayRequest,
  gateway: GatewayView = readGateway(request.object),
): GatewayReview {
  return {
    operation: request.operation,
    subResource: request.subResource ?? '',
    gateway,
    old: request.oldObject === undefined ? EMPTY : readGateway(request.oldObject),
    identity: {
      namespace: gateway.namespace ?? request.namespace ?? '',
      name: gateway.name ?? request.name ?? '',
    },
  };
}

export const isSpecWrite = (r: GatewayReview) =>
  (r.operation === 'CREATE' || r.operation === 'UPDATE') && r.subResource === '';
export const isStatusWrite = (r: GatewayReview) => r.operation === 'UPDATE' && r.subResource === 'status';
