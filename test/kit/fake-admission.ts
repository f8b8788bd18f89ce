/**
 * Gateway writes with dry-run semantics for the fake API server, in the order
 * kube-apiserver runs them: fields the Gateway CRD does not declare are pruned
 * (routability, when the CRD lacks it), a CREATE drops status, the validating
 * webhooks are called in order, and their answers are relayed as the API
 * server relays them: a denial as 403 `admission webhook "NAME" denied the
 * request: …`, a call that fails under failurePolicy Fail as 500 `failed
 * calling webhook "NAME": …`, warnings as `Warning: 299 - "…"` headers.
 * Only `dryRun=All` writes are served: nothing is ever stored, and a write
 * that is not a dry run answers 500, so a test sees any client that would
 * store. Mutating webhooks are not modelled.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GATEWAY_CRD_NAME } from '../../src/crd/patch.js';
import { testApp, post } from './app.js';
import type { RuleSettings } from '../../src/config/rule-settings.js';
import type { FakeApiServer } from './fake-apiserver.js';

type Json = Record<string, unknown>;

/** What one webhook call gives: the AdmissionReview response, or the error of a call that failed. */
export type WebhookAnswer =
  | { readonly kind: 'response'; readonly response: Json }
  | { readonly kind: 'call-failed'; readonly error: string };

export interface FakeWebhook {
  readonly name: string;
  readonly failurePolicy: 'Fail' | 'Ignore';
  /** The namespaces it selects (default: every one). */
  readonly namespaces?: readonly string[];
  readonly call: (request: Json) => Promise<WebhookAnswer>;
}

/** The real webhook app (in-process, inject), answering as `serve` does with these settings. */
export function realWebhook(
  name = 'validate.routability.gateway.networking.k8s.io',
  settings: Partial<RuleSettings> = {},
): FakeWebhook {
  const { app } = testApp({ settings });
  return {
    name,
    failurePolicy: 'Fail',
    call: async (request) => {
      const answer = await post(app, '/validate', {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request,
      });
      if (answer.status !== 200) return { kind: 'call-failed', error: `HTTP ${answer.status}` };
      return { kind: 'response', response: answer.json()['response'] as Json };
    },
  };
}

/** A webhook the API server cannot call: `error` is what Go's client says (x509, timeout, refused). */
export function unreachableWebhook(name: string, error: string): FakeWebhook {
  return {
    name,
    failurePolicy: 'Fail',
    call: () =>
      Promise.resolve({
        kind: 'call-failed',
        error: `failed to call webhook: Post "https://svc.ns.svc:443/validate?timeout=5s": ${error}`,
      }),
  };
}

/** Another product's webhook that denies every Gateway write. */
export function denyingWebhook(name: string, message: string): FakeWebhook {
  return {
    name,
    failurePolicy: 'Fail',
    call: () =>
      Promise.resolve({
        kind: 'response',
        response: { allowed: false, status: { code: 403, reason: 'Forbidden', message } },
      }),
  };
}

const GATEWAYS =
  /^\/apis\/gateway\.networking\.k8s\.io\/v1\/namespaces\/([^/]+)\/gateways(?:\/([^/]+)\/status)?$/;

/** Whether the stored Gateway CRD declares routability in v1 spec addresses (else the API server prunes it). */
function crdDeclaresRoutability(fake: FakeApiServer): boolean {
  const crd = fake.crds.get(GATEWAY_CRD_NAME) as Json | undefined;
  const versions = ((crd?.['spec'] as Json | undefined)?.['versions'] ?? []) as Json[];
  const v1 = versions.find((v) => v['name'] === 'v1');
  const path = [
    'schema',
    'openAPIV3Schema',
    'properties',
    'spec',
    'properties',
    'addresses',
    'items',
    'properties',
  ];
  let at: unknown = v1;
  for (const key of path) at = (at as Json | undefined)?.[key];
  return (at as Json | undefined)?.['routability'] !== undefined;
}

function prune(object: Json): void {
  for (const list of ['spec', 'status']) {
    const addresses = (object[list] as Json | undefined)?.['addresses'];
    if (Array.isArray(addresses)) for (const a of addresses as Json[]) delete a['routability'];
  }
}

function readBody(req: IncomingMessage): Promise<Json> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json));
    req.on('error', reject);
  });
}

function sendStatus(res: ServerResponse, code: number, reason: string, message: string): void {
  const text = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code });
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(text);
}

interface Write {
  readonly namespace: string;
  readonly name: string | undefined;
  readonly object: Json;
  readonly oldObject: Json | null;
}

/** The webhooks in order; the first denial or failed Fail call ends the request. */
async function admit(
  webhooks: readonly FakeWebhook[],
  write: Write,
  res: ServerResponse,
): Promise<string[] | undefined> {
  const warnings: string[] = [];
  const meta = write.object['metadata'] as Json;
  for (const webhook of webhooks) {
    if (webhook.namespaces && !webhook.namespaces.includes(write.namespace)) continue;
    const answer = await webhook.call({
      uid: '6c0e7a4e-0000-4000-8000-000000000001',
      kind: { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' },
      resource: { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways' },
      ...(write.oldObject ? { subResource: 'status' } : {}),
      name: String(meta['name']),
      namespace: write.namespace,
      operation: write.oldObject ? 'UPDATE' : 'CREATE',
      userInfo: { username: 'system:serviceaccount:test:verify' },
      object: write.object,
      oldObject: write.oldObject,
      dryRun: true,
    });
    if (answer.kind === 'call-failed') {
      if (webhook.failurePolicy === 'Ignore') continue;
      sendStatus(
        res,
        500,
        'InternalError',
        `Internal error occurred: failed calling webhook "${webhook.name}": ${answer.error}`,
      );
      return undefined;
    }
    warnings.push(...((answer.response['warnings'] as string[] | undefined) ?? []));
    if (answer.response['allowed'] !== true) {
      const status = (answer.response['status'] ?? {}) as Json;
      const code = typeof status['code'] === 'number' && status['code'] >= 400 ? status['code'] : 400;
      sendStatus(
        res,
        code,
        String(status['reason'] ?? 'BadRequest'),
        `admission webhook "${webhook.name}" denied the request: ${String(status['message'] ?? '')}`,
      );
      return undefined;
    }
  }
  return warnings;
}

/** Serves dry-run Gateway creates and status updates on the fake through these webhooks. */
export function installDryRunAdmission(fake: FakeApiServer, webhooks: readonly FakeWebhook[]): void {
  fake.addRoute((req, res, url) => {
    const m = GATEWAYS.exec(url.pathname);
    const statusWrite = m?.[2] !== undefined && req.method === 'PUT';
    if (!m || !(statusWrite || (m[2] === undefined && req.method === 'POST'))) return false;
    void (async () => {
      const body = await readBody(req);
      if (url.searchParams.get('dryRun') !== 'All') {
        sendStatus(res, 500, 'InternalError', 'the fake API server stores no Gateway: send dryRun=All');
        return;
      }
      const namespace = decodeURIComponent(m[1]!);
      const name = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
      const stored = name === undefined ? undefined : fake.object('gateways', `${namespace}/${name}`);
      if (name !== undefined && !stored) {
        sendStatus(res, 404, 'NotFound', `gateways.gateway.networking.k8s.io "${name}" not found`);
        return;
      }
      // On the status subresource only status changes; on create status is dropped.
      const object: Json = stored ? { ...stored, status: body['status'] } : { ...body };
      if (!stored) delete object['status'];
      const meta = object['metadata'] as Json;
      // The API server completes a generateName with five random characters, dry runs included.
      const generated = typeof meta['generateName'] === 'string' && meta['name'] === undefined;
      object['metadata'] = {
        ...meta,
        namespace,
        ...(generated ? { name: `${String(meta['generateName'])}x7k2q` } : {}),
      };
      const taken =
        !stored &&
        typeof meta['name'] === 'string' &&
        fake.object('gateways', `${namespace}/${meta['name']}`);
      if (taken) {
        sendStatus(
          res,
          409,
          'AlreadyExists',
          `gateways.gateway.networking.k8s.io "${String(meta['name'])}" already exists`,
        );
        return;
      }
      if (!crdDeclaresRoutability(fake)) prune(object);
      const warnings = await admit(webhooks, { namespace, name, object, oldObject: stored ?? null }, res);
      if (warnings === undefined) return;
      const text = JSON.stringify(object);
      res.writeHead(
        stored ? 200 : 201,
        [
          ['content-type', 'application/json'],
          ...warnings.map((w) => ['warning', `299 - "${w.replaceAll('"', '\\"')}"`]),
        ].flat(),
      );
      res.end(text);
    })();
    return true;
  });
}
