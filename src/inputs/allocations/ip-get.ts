/**
 * One GET of one IPAddress object (networking.k8s.io/v1) by name, through the
 * kube client's keep-alive pool. IPAddress objects are named by the canonical
 * IP, so this answers "is this IP held, and by whom" without listing anything;
 * the caller's signal cuts the request off at the lookup's deadline.
 */
import { asRecord, own, stringAt } from '../../json/record.js';
import type { KubeClient } from '../../kube/client.js';
import { MAX_RETRY_AFTER_MS, parseRetryAfter, shortStatus } from '../../kube/errors.js';
import type { IPAddressHolder } from '../../rules/index.js';

export type GetResult =
  | { readonly kind: 'held'; readonly holder: IPAddressHolder }
  /** No IPAddress of that name: nothing holds the IP. */
  | { readonly kind: 'free' }
  /** The cluster serves no IPAddress API (Kubernetes before 1.33): the rule is skipped. */
  | { readonly kind: 'absent' }
  /** No usable answer; `reason` is a few words for the user's warning; `retryAfterMs` what the server asked to wait. */
  | {
      readonly kind: 'error';
      readonly reason: string;
      readonly detail: string;
      readonly retryAfterMs?: number;
    };

export interface IPAddressGetter {
  get(name: string, signal: AbortSignal): Promise<GetResult>;
  /** Closes the pooled connections. */
  close(): void;
}

// Answers are one small object; anything much larger is not an IPAddress.
const MAX_ANSWER_BYTES = 64 * 1024;

/** A 404 names the object when the API is served and the object is missing; an unserved API answers without. */
export function isObjectNotFound(body: string, name: string): boolean {
  let status: unknown;
  try {
    status = JSON.parse(body) as unknown;
  } catch {
    return false;
  }
  const record = asRecord(status);
  return own(record, 'reason') === 'NotFound' && own(asRecord(own(record, 'details')), 'name') === name;
}

/** The holder named by an IPAddress's parentRef; core-group parents have group "". */
export function holderFromIPAddress(object: unknown): IPAddressHolder | undefined {
  const ref = asRecord(own(asRecord(own(asRecord(object), 'spec')), 'parentRef'));
  const resource = stringAt(ref, 'resource');
  const name = stringAt(ref, 'name');
  if (resource === undefined || name === undefined) return undefined;
  return {
    group: stringAt(ref, 'group') ?? '',
    resource,
    namespace: stringAt(ref, 'namespace') ?? '',
    name,
  };
}

export function interpretAnswer(
  name: string,
  status: number,
  body: string,
  retryAfter?: string | undefined,
): GetResult {
  if (status === 200) {
    let object: unknown;
    try {
      object = JSON.parse(body) as unknown;
    } catch {
      return { kind: 'error', reason: 'unreadable answer from the API server', detail: 'invalid JSON' };
    }
    const holder = holderFromIPAddress(object);
    // An IPAddress without a usable parentRef still holds the IP: name the IPAddress itself.
    return {
      kind: 'held',
      holder: holder ?? { group: 'networking.k8s.io', resource: 'ipaddresses', namespace: '', name },
    };
  }
  if (status === 404) return isObjectNotFound(body, name) ? { kind: 'free' } : { kind: 'absent' };
  const wait = parseRetryAfter(retryAfter, Date.now());
  return {
    kind: 'error',
    reason: shortStatus(status, { verb: 'get', resource: 'ipaddresses' }),
    detail: body.slice(0, 300),
    ...(wait !== undefined ? { retryAfterMs: Math.min(wait, MAX_RETRY_AFTER_MS) } : {}),
  };
}

const PATH = '/apis/networking.k8s.io/v1/ipaddresses/';

/** GETs `/apis/networking.k8s.io/v1/ipaddresses/<name>`; `timeoutMs` bounds a call whose signal never fires. */
export function ipAddressGetter(client: KubeClient, timeoutMs: number): IPAddressGetter {
  const get = async (name: string, signal: AbortSignal): Promise<GetResult> => {
    const answer = await client.send({
      path: `${PATH}${encodeURIComponent(name)}`,
      // resourceVersion=0: served from the API server's watch cache, not a quorum read of etcd;
      // at most as stale as that cache, which the answer cache's TTL exceeds anyway.
      query: { resourceVersion: '0' },
      maxBodyBytes: MAX_ANSWER_BYTES,
      timeoutMs,
      signal,
      what: `GET ipaddresses/${name}`,
    });
    return interpretAnswer(name, answer.status, answer.text, answer.retryAfter);
  };
  return { get, close: () => client.close() };
}
