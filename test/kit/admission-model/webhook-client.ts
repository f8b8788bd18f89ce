/**
 * One call of a webhook, as the API server makes it: POST of an
 * AdmissionReview over HTTPS to `<service>.<namespace>.svc` on the
 * clientConfig's port and path, trusting only the caBundle and checking the
 * certificate's name (k8s.io/apiserver pkg/util/webhook: the client
 * manager and service resolver), within timeoutSeconds (default 10;
 * validating/dispatcher.go and mutating/dispatcher.go wrap the call in a
 * context with that deadline). Every failure to get an answer — no ready
 * endpoint, connection refused, TLS failure, timeout, a non-200 status, an
 * answer whose uid does not match (webhook/request/admissionreview.go
 * VerifyAdmissionResponse) — is an ErrCallingWebhook, which failurePolicy
 * decides; an answer with allowed: false is a rejection, which it does not.
 */
import { request as httpsRequest } from 'node:https';
import type { Backend } from './types.js';

export interface ClientConfig {
  readonly service?: { name: string; namespace: string; path?: string; port?: number };
  readonly url?: string;
  readonly caBundle?: string;
}

export interface AdmissionAnswer {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: { code?: number; message?: string; reason?: string };
  readonly patch?: string;
  readonly patchType?: string;
  readonly warnings?: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
}

export type CallResult =
  | { readonly kind: 'answer'; readonly answer: AdmissionAnswer }
  | { readonly kind: 'call-error'; readonly reason: string };

export interface CallOptions {
  readonly clientConfig: ClientConfig;
  readonly timeoutSeconds: number | undefined;
  readonly backend: Backend;
  /** Scales the deadline (1 = real seconds); stories use a small factor so a timeout costs milliseconds. */
  readonly timeScale: number;
}

const DEFAULT_TIMEOUT_SECONDS = 10;

function verify(uid: string, body: string): CallResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { kind: 'call-error', reason: 'received invalid webhook response: not JSON' };
  }
  const response = (parsed as { response?: AdmissionAnswer } | null)?.response;
  if (!response || typeof response.allowed !== 'boolean')
    return { kind: 'call-error', reason: 'received invalid webhook response: no response.allowed' };
  if (response.uid !== uid)
    return {
      kind: 'call-error',
      reason: `expected response.uid="${uid}", got "${String(response.uid)}"`,
    };
  return { kind: 'answer', answer: response };
}

export function callWebhook(review: { request: { uid: string } }, o: CallOptions): Promise<CallResult> {
  const service = o.clientConfig.service;
  if (!service) return Promise.resolve({ kind: 'call-error', reason: 'clientConfig.url is not modelled' });
  if (o.backend.kind === 'no-endpoints')
    return Promise.resolve({
      kind: 'call-error',
      reason: `failed to call webhook: no endpoints available for service "${service.name}"`,
    });
  const port = o.backend.port;
  const timeoutMs = (o.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000 * o.timeScale;
  const ca = o.clientConfig.caBundle
    ? Buffer.from(o.clientConfig.caBundle, 'base64').toString('utf8')
    : undefined;
  const body = JSON.stringify(review);
  return new Promise((resolve) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path: service.path ?? '/',
        method: 'POST',
        servername: `${service.name}.${service.namespace}.svc`,
        // An empty caBundle means the API server's system trust: no test CA is in it.
        ...(ca ? { ca } : {}),
        rejectUnauthorized: true,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200)
            resolve({ kind: 'call-error', reason: `the server responded with status ${res.statusCode}` });
          else resolve(verify(review.request.uid, text));
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded')));
    req.on('error', (err) =>
      resolve({ kind: 'call-error', reason: `failed to call webhook: ${err.message}` }),
    );
    req.end(body);
  });
}
