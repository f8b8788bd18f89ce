// --client-allowed-names: with mTLS, a client certificate the CA signed is accepted only when its
// subject CN or a DNS SAN is one of the names; any other is disconnected after the handshake, before
// any request is read, with no HTTP answer and one log line. Real certificates, the built server.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import selfsigned from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServeConfig } from '../../src/config/serve.js';
import { clientCertificateNames } from '../../src/http/tls.js';
import { defaultGateway, gatewayReview } from '../kit/reviews.js';
import { eventually } from '../kit/eventually.js';
import { httpsPost } from '../kit/http.js';
import { startServe, type RunningServer } from '../kit/server-process.js';
import { writeCerts, type CertFiles } from '../kit/key-files.js';

let certs: CertFiles;
let server: RunningServer;
const client: Record<string, { cert: string; key: string }> = {};

/** A client certificate signed by the CA that --client-ca-file names. */
async function clientCert(cn: string, dnsNames: string[] = []): Promise<{ cert: string; key: string }> {
  const made = await selfsigned.generate([{ name: 'commonName', value: cn }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: { key: certs.generated.caKey, cert: certs.generated.caCert },
    extensions: [
      { name: 'extKeyUsage', clientAuth: true },
      ...(dnsNames.length > 0
        ? [
            {
              name: 'subjectAltName' as const,
              altNames: dnsNames.map((value) => ({ type: 2 as const, value })),
            },
          ]
        : []),
    ],
  });
  return { cert: made.cert, key: made.private };
}

beforeAll(async () => {
  certs = await writeCerts();
  client['byCn'] = await clientCert('Kube-APIServer');
  client['bySan'] = await clientCert('some-client', ['other.example', 'webhook-client.example']);
  client['neither'] = await clientCert('intruder', ['intruder.example']);
  const caFile = join(certs.dir, 'client-ca.crt');
  writeFileSync(caFile, certs.generated.caCert);
  server = await startServe([
    '--tls-cert-file',
    certs.certFile,
    '--tls-private-key-file',
    certs.keyFile,
    '--client-ca-file',
    caFile,
    '--client-allowed-names',
    'kube-apiserver,webhook-client.example',
    '--service-cidr',
    '10.96.0.0/12',
    '--no-check-allocated-ips',
    '--gep-revision',
    'provisional',
    '--audit-interval',
    '0',
  ]);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  certs?.remove();
});

const review = JSON.stringify(
  gatewayReview({
    uid: 'names-1',
    object: defaultGateway([{ type: 'IPAddress', value: '10.96.0.5', routability: 'Cluster' }]),
  }),
);

function ask(who: { cert: string; key: string }) {
  return httpsPost(server.port, '/validate', review, { ca: certs.generated.caCert, ...who }).then(
    (r) => ({ status: r.status, body: r.body }),
    (err: NodeJS.ErrnoException) => ({ error: err.code }),
  );
}

describe('serve --client-allowed-names', () => {
  it('answers a client whose CN is allowed (any case)', async () => {
    expect(await ask(client['byCn']!)).toMatchObject({ status: 200 });
  });

  it('answers a client whose DNS SAN is allowed', async () => {
    expect(await ask(client['bySan']!)).toMatchObject({ status: 200 });
  });

  it('disconnects a client the CA signed whose names are not allowed: no answer, one log line', async () => {
    const answer = await ask(client['neither']!);
    expect(answer).not.toHaveProperty('status');
    expect(['ECONNRESET', 'EPIPE']).toContain((answer as { error?: string }).error);
    // The server's log line may reach us after the client saw the connection close.
    const refusal = () =>
      server.logs.find((l) => String(l['msg']).includes('--client-allowed-names; connection closed'));
    await eventually(() => refusal() !== undefined, 'the refusal logged', 10_000, 20);
    const line = refusal();
    expect(line).toMatchObject({ level: 40, clientNames: ['intruder', 'intruder.example'] });
    // The review never reached the HTTP layer.
    expect(server.logs.some((l) => l['uid'] === 'names-1' && JSON.stringify(l).includes('intruder'))).toBe(
      false,
    );
  });

  it('says at start which names it accepts', () => {
    expect(server.logs.find((l) => l['clientAllowedNames'] !== undefined)?.['clientAllowedNames']).toEqual([
      'kube-apiserver',
      'webhook-client.example',
    ]);
  });
});

describe('--client-allowed-names: the flag', () => {
  const base = ['--tls-cert-file=/c', '--tls-private-key-file=/k'];
  it.each<[string, string[], string | string[]]>([
    ['needs --client-ca-file', ['--client-allowed-names=a'], '--client-allowed-names needs --client-ca-file'],
    [
      'refuses a name with a space',
      ['--client-ca-file=/ca', '--client-allowed-names=kube apiserver'],
      '"kube apiserver" is not a certificate name',
    ],
    [
      'lower-cases and de-duplicates',
      ['--client-ca-file=/ca', '--client-allowed-names=A', '--client-allowed-names=a,b'],
      ['a', 'b'],
    ],
    ['none: any certificate the CA signed', ['--client-ca-file=/ca'], []],
  ])('%s', (_name, args, expected) => {
    const parsed = parseServeConfig([...base, ...args], {});
    if (typeof expected === 'string') {
      expect(parsed.ok).toBe(false);
      expect(parsed.ok ? '' : parsed.error).toContain(expected);
    } else {
      expect(parsed.ok && parsed.value.clientAllowedNames).toEqual(expected);
    }
  });

  it('reads a certificate: every CN and DNS SAN, lower-cased; not IP or email SANs', () => {
    expect(
      clientCertificateNames({
        subject: { CN: ['A', 'b'], O: 'x' },
        subjectaltname: 'DNS:Host.Example, IP Address:10.0.0.1, email:a@b.c, DNS:b',
      }),
    ).toEqual(['a', 'b', 'host.example']);
    expect(clientCertificateNames({})).toEqual([]);
  });
});
