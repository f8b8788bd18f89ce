// helm TLS mode keeps its CA and certificate across upgrades by reading the existing Secret back
// with `lookup`. `helm template --dry-run=server` performs real lookups; a tiny in-process fake
// apiserver answers the two requests it makes (discovery of v1, then GET of the Secret).
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FULLNAME, NAMESPACE, helm, helmBinary, one, parseManifests, templateArgs } from './helm.js';
import { startLookupApiserver, type LookupApiserver } from './lookup-apiserver.js';

const { skipReason } = helmBinary();
if (skipReason) console.warn(`chart tests skipped: ${skipReason}`);

const SECRET_PATH = `/api/v1/namespaces/${NAMESPACE}/secrets/${FULLNAME}-tls`;

describe.skipIf(skipReason !== undefined)('helm TLS mode across upgrades (lookup)', () => {
  let fake: LookupApiserver;
  let existing: Record<string, string> | undefined;
  /** The stored Secret's annotations (the chart records the certificate's expiry there). */
  let annotations: Record<string, string> | undefined;
  let requests: string[];

  beforeAll(async () => {
    fake = await startLookupApiserver(
      { '/api/v1': [{ name: 'secrets', singularName: 'secret', namespaced: true, kind: 'Secret' }] },
      (path) =>
        path === SECRET_PATH && existing
          ? {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: {
                name: `${FULLNAME}-tls`,
                namespace: NAMESPACE,
                ...(annotations ? { annotations } : {}),
              },
              type: 'kubernetes.io/tls',
              data: existing,
            }
          : undefined,
    );
    requests = fake.requests;
  });
  afterAll(() => fake.close());

  async function renderAgainstCluster() {
    const result = await helm([...templateArgs(), '--dry-run=server', '--kube-apiserver', fake.url]);
    if (result.code !== 0) throw new Error(result.stderr);
    return parseManifests(result.stdout);
  }

  it('first install (no Secret yet): generates fresh material', async () => {
    existing = undefined;
    requests.length = 0;
    const docs = await renderAgainstCluster();
    expect(requests).toContain(`GET ${SECRET_PATH}`);
    const data = one(docs, 'Secret').data as Record<string, string>;
    const cert = new X509Certificate(Buffer.from(data['tls.crt'] as string, 'base64'));
    expect(cert.checkIssued(new X509Certificate(Buffer.from(data['ca.crt'] as string, 'base64')))).toBe(true);
  });

  it('upgrade: reuses the stored CA, certificate and key, and keeps caBundle in step', async () => {
    // Material from an earlier install.
    existing = undefined;
    const firstSecret = one(await renderAgainstCluster(), 'Secret');
    annotations = firstSecret.metadata.annotations;
    const first = firstSecret.data as Record<string, string>;
    existing = {
      'ca.crt': first['ca.crt'] as string,
      'tls.crt': first['tls.crt'] as string,
      'tls.key': first['tls.key'] as string,
    };
    requests.length = 0;
    const docs = await renderAgainstCluster();
    expect(requests).toContain(`GET ${SECRET_PATH}`);
    expect(one(docs, 'Secret').data).toEqual(existing);
    expect(one(docs, 'Secret').metadata.annotations).toEqual(annotations);
    expect(one(docs, 'ValidatingWebhookConfiguration').webhooks[0].clientConfig.caBundle).toBe(
      existing['ca.crt'],
    );
    expect(one(docs, 'MutatingWebhookConfiguration').webhooks[0].clientConfig.caBundle).toBe(
      existing['ca.crt'],
    );
  });

  it('a partial Secret (no ca.crt) is replaced, never half reused', async () => {
    const first = one(await renderAgainstCluster(), 'Secret').data as Record<string, string>;
    existing = { 'tls.crt': first['tls.crt'] as string, 'tls.key': first['tls.key'] as string };
    const data = one(await renderAgainstCluster(), 'Secret').data as Record<string, string>;
    expect(data['tls.crt']).not.toBe(existing['tls.crt']);
    expect(data['ca.crt']).toBeTruthy();
  });

  /** An earlier install whose certificate expires at `notAfter` (Unix seconds; undefined: not recorded). */
  async function installedWith(notAfter: number | undefined) {
    existing = undefined;
    annotations = undefined;
    const first = one(await renderAgainstCluster(), 'Secret').data as Record<string, string>;
    existing = { 'ca.crt': first['ca.crt']!, 'tls.crt': first['tls.crt']!, 'tls.key': first['tls.key']! };
    annotations =
      notAfter === undefined
        ? undefined
        : { 'gateway-routability-webhook.io/not-after-unix': String(notAfter) };
    return existing;
  }

  const pems = (b64: string) =>
    Buffer.from(b64, 'base64')
      .toString('utf8')
      .match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)!
      .map((p) => new X509Certificate(p));

  for (const [what, notAfter] of [
    ['within tls.helm.renewBeforeDays of expiry', Math.floor(Date.now() / 1000) + 100 * 86_400],
    ['from a chart that did not record the expiry', undefined],
  ] as const)
    it(`upgrade ${what}: renews, and caBundle trusts both the new and the previous certificate`, async () => {
      const old = await installedWith(notAfter);
      const docs = await renderAgainstCluster();
      const secret = one(docs, 'Secret');
      const data = secret.data as Record<string, string>;
      expect(data['tls.crt']).not.toBe(old['tls.crt']);
      const bundle = pems(data['ca.crt']!);
      expect(bundle).toHaveLength(2);
      const [newCa, previousCa] = bundle as [X509Certificate, X509Certificate];
      expect(new X509Certificate(Buffer.from(data['tls.crt']!, 'base64')).checkIssued(newCa)).toBe(true);
      // Replicas still serving the old certificate until the kubelet swaps the Secret stay trusted.
      expect(new X509Certificate(Buffer.from(old['tls.crt']!, 'base64')).checkIssued(previousCa)).toBe(true);
      for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'])
        expect(one(docs, kind).webhooks[0].clientConfig.caBundle).toBe(data['ca.crt']);
      const recorded = Number(secret.metadata.annotations?.['gateway-routability-webhook.io/not-after-unix']);
      const leafNotAfter =
        new Date(new X509Certificate(Buffer.from(data['tls.crt']!, 'base64')).validTo).getTime() / 1000;
      expect(Math.abs(recorded - leafNotAfter)).toBeLessThan(120);
    });

  it('a second renewal keeps only the previous CA beside the new one (the bundle does not grow)', async () => {
    await installedWith(undefined);
    const renewed = one(await renderAgainstCluster(), 'Secret').data as Record<string, string>;
    existing = {
      'ca.crt': renewed['ca.crt']!,
      'tls.crt': renewed['tls.crt']!,
      'tls.key': renewed['tls.key']!,
    };
    annotations = { 'gateway-routability-webhook.io/not-after-unix': String(Math.floor(Date.now() / 1000)) };
    const again = one(await renderAgainstCluster(), 'Secret').data as Record<string, string>;
    const bundle = pems(again['ca.crt']!);
    expect(bundle).toHaveLength(2);
    expect(bundle[1]!.raw.equals(pems(renewed['ca.crt']!)[0]!.raw)).toBe(true);
  });
});
