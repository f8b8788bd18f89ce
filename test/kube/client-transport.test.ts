/**
 * The Kubernetes client's transport (src/kube/client.ts), against an HTTPS server on loopback: the
 * cluster's CA is trusted and nothing else unless the kubeconfig skips verification; the sockets
 * are kept alive in one pool while the TLS material stays the same, and a new pool (a new
 * connection) follows a change of it; close() ends the pooled connections; basic auth is sent as
 * client-node sets it; and the texts of the answer's `Warning` headers, as the API server writes them.
 */
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { KubeConfig } from '../../src/kube/kubeconfig-model.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificates } from '../../src/certs/generate.js';
import { kubeClient, warningTexts } from '../../src/kube/client.js';

describe('warningTexts', () => {
  it.each<[string, string[], string[]]>([
    ['one warning', ['Warning', '299 - "a deprecated field"'], ['a deprecated field']],
    ['any case of the header name', ['WARNING', '299 - "x"', 'warning', '299 - "y"'], ['x', 'y']],
    ['other headers passed over', ['Content-Type', '299 - "no"', 'Warning', '299 - "yes"'], ['yes']],
    [
      'escaped quotes and backslashes unescaped',
      ['Warning', '299 - "say \\"hi\\" \\\\ there"'],
      ['say "hi" \\ there'],
    ],
    ['a code of three digits and an agent are needed', ['Warning', '29 - "a"', 'Warning', '299  "b"'], []],
    ['the code at the start only', ['Warning', 'x299 - "a"'], []],
    [
      'an agent of several characters',
      ['Warning', '299 kube-apiserver "from the server"'],
      ['from the server'],
    ],
    ['an empty text', ['Warning', '299 - ""'], ['']],
    ['a name without a value is not read past the end', ['Warning'], []],
    ['in order, after a header without a value', ['X', 'Warning', '299 - "late"'], []],
  ])('%s', (_name, raw, texts) => {
    expect(warningTexts(raw)).toEqual(texts);
  });
});

let ca: { cert: string; key: string };
let other: { cert: string; key: string };
let server: Server;
let url: string;
/** Client ports of the connections the server accepted, and those closed since. */
const accepted: number[] = [];
const closed: number[] = [];
const authorization: (string | undefined)[] = [];

beforeAll(async () => {
  const mine = await generateCertificates({ service: 'api', namespace: 'default' });
  const theirs = await generateCertificates({ service: 'other', namespace: 'default' });
  ca = { cert: mine.caCert, key: mine.caKey };
  other = { cert: theirs.caCert, key: theirs.caKey };
  server = createServer({ cert: mine.cert, key: mine.key }, (req, res) => {
    authorization.push(req.headers.authorization);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ port: req.socket.remotePort }));
  });
  server.on('secureConnection', (socket: Socket) => {
    const port = socket.remotePort!;
    accepted.push(port);
    socket.on('close', () => closed.push(port));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

interface Trust {
  readonly caData?: string;
  readonly skipTLSVerify?: boolean;
}

function configure(kc: KubeConfig, trust: Trust, user: Record<string, string> = { token: 't' }): KubeConfig {
  kc.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: url,
        skipTLSVerify: trust.skipTLSVerify ?? false,
        ...(trust.caData ? { caData: trust.caData } : {}),
      },
    ],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const b64 = (pem: string) => Buffer.from(pem).toString('base64');
const portOf = async (client: ReturnType<typeof kubeClient>) =>
  ((await client.json({ path: '/api', timeoutMs: 10_000 })) as { port: number }).port;

describe('the client over HTTPS', () => {
  it('trusts the cluster’s CA, and only it', async () => {
    const trusted = kubeClient(configure(new KubeConfig(), { caData: b64(ca.cert) }));
    const untrusted = kubeClient(configure(new KubeConfig(), { caData: b64(other.cert) }));
    try {
      expect(typeof (await portOf(trusted))).toBe('number');
      await expect(untrusted.json({ path: '/api', timeoutMs: 10_000 })).rejects.toThrow(/certificate/);
    } finally {
      trusted.close();
      untrusted.close();
    }
  });

  it('takes any certificate when the kubeconfig skips verification', async () => {
    const client = kubeClient(configure(new KubeConfig(), { skipTLSVerify: true }));
    try {
      expect(typeof (await portOf(client))).toBe('number');
    } finally {
      client.close();
    }
  });

  it('keeps one connection alive while the TLS material stays; a new CA gets a new one', async () => {
    const kc = configure(new KubeConfig(), { caData: b64(ca.cert) });
    const client = kubeClient(kc);
    try {
      const first = await portOf(client);
      expect(await portOf(client)).toBe(first);
      expect(await portOf(client)).toBe(first);
      // The same CA loaded again (a new Buffer of the same bytes): still the same pool.
      configure(kc, { caData: b64(ca.cert) });
      expect(await portOf(client)).toBe(first);
      // Rotated trust (both CAs): a fresh pool, and the old one's connection closed.
      configure(kc, { caData: b64(`${ca.cert.trim()}\n${other.cert.trim()}\n`) });
      const second = await portOf(client);
      expect(second).not.toBe(first);
      await until(() => closed.includes(first));
      expect(await portOf(client)).toBe(second);
      // Verification skipped is a change of TLS material too.
      configure(kc, { skipTLSVerify: true });
      expect(await portOf(client)).not.toBe(second);
    } finally {
      client.close();
    }
  });

  it('close() ends the pooled connection, and a client that never sent closes quietly', async () => {
    const client = kubeClient(configure(new KubeConfig(), { caData: b64(ca.cert) }));
    const port = await portOf(client);
    client.close();
    await until(() => closed.includes(port));
    expect(() => kubeClient(configure(new KubeConfig(), { skipTLSVerify: true })).close()).not.toThrow();
  });

  it('sends basic auth as client-node sets it, and a token as a bearer', async () => {
    authorization.length = 0;
    const basic = kubeClient(
      configure(new KubeConfig(), { skipTLSVerify: true }, { username: 'ann', password: 'pw' }),
    );
    const bearer = kubeClient(configure(new KubeConfig(), { skipTLSVerify: true }, { token: 'tok' }));
    try {
      await portOf(basic);
      await portOf(bearer);
      expect(authorization).toEqual([`Basic ${Buffer.from('ann:pw').toString('base64')}`, 'Bearer tok']);
    } finally {
      basic.close();
      bearer.close();
    }
  });
});

async function until(condition: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > end) throw new Error('not within 10 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}
