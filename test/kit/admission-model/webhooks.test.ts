/**
 * The model's webhook dispatch against a scripted HTTPS webhook: what a call
 * failure, a denial, a patch, a dry run and reinvocation do (validating and
 * mutating dispatcher.go, generic/webhook.go, webhook/errors/statuserror.go).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { admit } from './api-server.js';
import type { Cluster } from './cluster.js';
import {
  baseCluster,
  configuration,
  createOf,
  gateway,
  SERVICE,
  statusOf,
  webhookEntry,
} from './fixtures.js';
import {
  allow,
  closedPort,
  startScriptedWebhook,
  startSilentPort,
  type ScriptedWebhook,
} from './scripted-webhook.js';
import type { Backend, Obj } from './types.js';

let hook: ScriptedWebhook;
let silent: { port: number; close(): Promise<void> };
let other: ScriptedWebhook;

beforeAll(async () => {
  hook = await startScriptedWebhook(SERVICE.name, SERVICE.namespace);
  other = await startScriptedWebhook(SERVICE.name, SERVICE.namespace);
  silent = await startSilentPort();
});
afterAll(async () => {
  await hook.close();
  await other.close();
  await silent.close();
});
beforeEach(() => {
  hook.setScript(allow);
  hook.received.length = 0;
});

function clusterWith(kind: 'Validating' | 'Mutating', entries: Obj[], backend?: Backend): Cluster {
  const c = baseCluster();
  const withCa = entries.map((e) => ({
    ...e,
    clientConfig: {
      ...(e['clientConfig'] as Obj),
      caBundle: (e['caBundle'] as string | undefined) ?? hook.caBundle,
    },
  }));
  c.apply(configuration(kind, 'cfg', withCa));
  c.setBackend(SERVICE.namespace, SERVICE.name, backend ?? { kind: 'serving', port: hook.port });
  return c;
}

describe('failurePolicy on a call that gets no answer (validating/dispatcher.go)', () => {
  const backends = async (): Promise<[string, Backend, Obj][]> => [
    ['no ready endpoint', { kind: 'no-endpoints' }, {}],
    ['connection refused', { kind: 'refused', port: await closedPort() }, {}],
    ['unreachable: the call times out', { kind: 'unreachable', port: silent.port }, {}],
    [
      'a caBundle that did not sign the serving certificate',
      { kind: 'serving', port: hook.port },
      { caBundle: other.caBundle },
    ],
  ];
  it('Fail refuses with 500 "failed calling webhook"; Ignore admits, for every kind of failure', async () => {
    for (const [what, backend, over] of await backends()) {
      const fail = await admit(clusterWith('Validating', [webhookEntry(over)], backend), createOf(), {
        timeScale: 0.05,
      });
      expect(fail.allowed, what).toBe(false);
      expect(fail.refusal?.code, what).toBe(500);
      expect(fail.refusal?.message, what).toMatch(/failed calling webhook "check.example.io"/);
      const ignore = await admit(
        clusterWith('Validating', [webhookEntry({ ...over, failurePolicy: 'Ignore' })], backend),
        createOf(),
        { timeScale: 0.05 },
      );
      expect(ignore.allowed, what).toBe(true);
      expect(ignore.trace.join('\n'), what).toMatch(/failed open/);
    }
  });
  it('an unset failurePolicy is Fail', async () => {
    const { failurePolicy: _, ...entry } = webhookEntry();
    const v = await admit(clusterWith('Validating', [entry], { kind: 'no-endpoints' }), createOf());
    expect(v.allowed).toBe(false);
  });
  it('timeoutSeconds bounds the wait: an answer later than that is a call error', async () => {
    hook.setScript(() => 'hang');
    const started = Date.now();
    const v = await admit(clusterWith('Validating', [webhookEntry({ timeoutSeconds: 1 })]), createOf(), {
      timeScale: 0.2,
    });
    expect(v.refusal?.message).toMatch(/context deadline exceeded/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
  it('an answer for another uid is a call error, which Ignore admits', async () => {
    hook.setScript(() => ({ uid: 'not-yours', allowed: false }));
    const fail = await admit(clusterWith('Validating', [webhookEntry()]), createOf());
    expect(fail.refusal?.message).toMatch(/expected response.uid/);
    const ignore = await admit(
      clusterWith('Validating', [webhookEntry({ failurePolicy: 'Ignore' })]),
      createOf(),
    );
    expect(ignore.allowed).toBe(true);
  });
});

describe('answers', () => {
  it('a denial refuses under Ignore too, with the webhook status and message (statuserror.go)', async () => {
    hook.setScript((r) => ({
      uid: r.uid,
      allowed: false,
      status: { code: 422, reason: 'Invalid', message: 'nope' },
    }));
    const v = await admit(clusterWith('Validating', [webhookEntry({ failurePolicy: 'Ignore' })]), createOf());
    expect(v.refusal).toMatchObject({
      code: 422,
      message: 'admission webhook "check.example.io" denied the request: nope',
    });
  });
  it('warnings and audit annotations of an allowed answer are kept, annotations under the entry name', async () => {
    hook.setScript((r) => ({ uid: r.uid, allowed: true, warnings: ['w1'], auditAnnotations: { k: 'v' } }));
    const v = await admit(clusterWith('Validating', [webhookEntry()]), createOf());
    expect(v.warnings).toEqual(['w1']);
    expect(v.auditAnnotations).toEqual({ 'check.example.io/k': 'v' });
  });
  it('the review carries the user, the dry run and, for status, the subresource and the old object', async () => {
    const v = await admit(
      clusterWith('Validating', [webhookEntry()]),
      statusOf(gateway(), gateway(), { dryRun: true }),
    );
    expect(v.allowed).toBe(true);
    const r = hook.received[0]!.request;
    expect(r).toMatchObject({ operation: 'UPDATE', subResource: 'status', dryRun: true });
    expect(r.userInfo.username).toBe('system:serviceaccount:gw:controller');
    expect(r.oldObject).not.toBeNull();
  });
});

describe('selection before the call (generic/webhook.go ShouldCallHook)', () => {
  const notIn = (ns: string) => ({
    namespaceSelector: {
      matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [ns] }],
    },
  });
  const rows: [string, Obj, ReturnType<typeof createOf>, boolean][] = [
    ['namespaceSelector excludes by kubernetes.io/metadata.name', notIn('apps'), createOf(), false],
    ['namespaceSelector lets another namespace through', notIn('kube-system'), createOf(), true],
    [
      'namespaceSelector on the namespace labels',
      { namespaceSelector: { matchLabels: { team: 'db' } } },
      createOf(),
      false,
    ],
    [
      'objectSelector on the object labels',
      { objectSelector: { matchLabels: { a: 'b' } } },
      createOf(gateway({ labels: { a: 'b' } })),
      true,
    ],
    [
      'objectSelector matches the old object too',
      { objectSelector: { matchLabels: { a: 'b' } } },
      statusOf(gateway(), gateway({ labels: { a: 'b' } })),
      true,
    ],
    [
      'objectSelector that matches neither',
      { objectSelector: { matchLabels: { a: 'b' } } },
      createOf(),
      false,
    ],
    [
      'a false matchCondition',
      { matchConditions: [{ name: 'never', expression: 'false' }] },
      createOf(),
      false,
    ],
  ];
  it.each(rows)('%s', async (_, over, write, called) => {
    const v = await admit(clusterWith('Validating', [webhookEntry(over)], { kind: 'no-endpoints' }), write);
    // With no endpoint and failurePolicy Fail, being called means being refused.
    expect(v.allowed).toBe(!called);
  });
  it('a matchCondition error under Fail refuses with 403 without calling the webhook', async () => {
    const entry = webhookEntry({ matchConditions: [{ name: 'bad', expression: 'object.spec.nope == 1' }] });
    const v = await admit(clusterWith('Validating', [entry]), createOf());
    expect(v.refusal?.code).toBe(403);
    expect(hook.received).toHaveLength(0);
  });
  it('a write into a namespace that does not exist is refused by NamespaceLifecycle first', async () => {
    const v = await admit(
      clusterWith('Validating', [webhookEntry()]),
      createOf(gateway(), { namespace: 'nowhere' }),
    );
    expect(v.refusal).toMatchObject({ by: 'NamespaceLifecycle', code: 404 });
  });
  it('a v1beta1 write reaches a v1-only entry converted to v1 (matchPolicy Equivalent)', async () => {
    await admit(clusterWith('Validating', [webhookEntry()]), createOf(gateway(), { version: 'v1beta1' }));
    expect(hook.received[0]!.request.kind.version).toBe('v1');
    expect(hook.received[0]!.request.object['apiVersion']).toBe('gateway.networking.k8s.io/v1');
  });
});

describe('dry run (dispatcher callHook)', () => {
  it.each([
    ['None', true],
    ['NoneOnDryRun', true],
    ['Some', false],
    ['Unknown', false],
  ])('sideEffects %s: the dry run is admitted %s', async (sideEffects, admitted) => {
    const v = await admit(
      clusterWith('Validating', [webhookEntry({ sideEffects, failurePolicy: 'Ignore' })]),
      createOf(gateway(), { dryRun: true }),
    );
    expect(v.allowed).toBe(admitted);
    if (!admitted) expect(v.refusal?.message).toMatch(/does not support dry run/);
  });
});

describe('mutating webhooks (mutating/dispatcher.go, reinvocationcontext.go)', () => {
  const patch = (ops: object[]) => Buffer.from(JSON.stringify(ops)).toString('base64');
  const label = (k: string) => patch([{ op: 'add', path: `/metadata/labels`, value: { [k]: 'x' } }]);
  const mutatingEntry = (name: string, over: Obj = {}) =>
    webhookEntry({ name, clientConfig: { service: { ...SERVICE, path: `/${name}`, port: 443 } }, ...over });

  it('a JSON patch changes the stored object', async () => {
    hook.setScript((r) => ({ uid: r.uid, allowed: true, patchType: 'JSONPatch', patch: label('a') }));
    const v = await admit(clusterWith('Mutating', [mutatingEntry('a')]), createOf());
    expect((v.object['metadata'] as Obj)['labels']).toEqual({ a: 'x' });
  });
  it('a patch that cannot apply refuses the write even under Ignore', async () => {
    hook.setScript((r) => ({
      uid: r.uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: patch([{ op: 'remove', path: '/nope' }]),
    }));
    const v = await admit(
      clusterWith('Mutating', [mutatingEntry('a', { failurePolicy: 'Ignore' })]),
      createOf(),
    );
    expect(v.refusal?.code).toBe(500);
  });
  it('an IfNeeded entry is called again when a later entry changes the object; Never is not', async () => {
    hook.setScript((r, path) =>
      path === '/second' && !(r.object['metadata'] as Obj)['labels']
        ? { uid: r.uid, allowed: true, patchType: 'JSONPatch', patch: label('b') }
        : { uid: r.uid, allowed: true },
    );
    for (const [policy, calls] of [
      ['IfNeeded', ['/first', '/second', '/first']],
      ['Never', ['/first', '/second']],
    ] as const) {
      hook.received.length = 0;
      const c = clusterWith('Mutating', [
        mutatingEntry('first', { reinvocationPolicy: policy }),
        mutatingEntry('second', { reinvocationPolicy: policy }),
      ]);
      await admit(c, createOf());
      expect(
        hook.received.map((x) => x.path),
        policy,
      ).toEqual(calls);
    }
  });
  it('a patched field the CRD schema lacks is pruned; a status write keeps only the status patch', async () => {
    const statusPatch = patch([
      { op: 'add', path: '/status/extra', value: 1 },
      { op: 'add', path: '/status/addresses', value: [{ value: '1.2.3.4' }] },
      { op: 'add', path: '/spec/gatewayClassName', value: 'changed' },
    ]);
    hook.setScript((r) => ({ uid: r.uid, allowed: true, patchType: 'JSONPatch', patch: statusPatch }));
    const c = clusterWith('Mutating', [mutatingEntry('a')]);
    c.apply({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gateways.gateway.networking.k8s.io' },
      spec: {
        versions: [
          {
            name: 'v1',
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  status: {
                    type: 'object',
                    properties: {
                      addresses: {
                        type: 'array',
                        items: { type: 'object', properties: { value: { type: 'string' } } },
                      },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    });
    const v = await admit(c, statusOf(gateway({ status: { sentByClient: true } })));
    // The request body is pruned before the webhook sees it, the patched object after.
    expect(hook.received[0]!.request.object['status']).toEqual({});
    expect(v.object['status']).toEqual({ addresses: [{ value: '1.2.3.4' }] });
    expect((v.object['spec'] as Obj)['gatewayClassName']).toBe('example');
  });
});
