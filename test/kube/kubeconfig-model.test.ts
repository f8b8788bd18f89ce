// The kubeconfig read and applied by the project itself (src/kube/kubeconfig-model.ts,
// kubeconfig-auth.ts): every form of credentials a request gets, and @kubernetes/client-node
// loaded only for the forms left to it (auth-provider plugins, proxy-url).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '../../src/kube/kubeconfig-model.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-model-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

let files = 0;
function file(content: string, name = `f${files++}`): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** A kubeconfig of one cluster, one user and one context; `cluster` and `user` are YAML flow-mapping bodies. */
function kubeconfig(cluster: string, user: string, at = dir): string {
  mkdirSync(at, { recursive: true });
  return file(
    [
      `clusters: [{name: c, cluster: {${cluster}}}]`,
      `users: [{name: u, user: {${user}}}]`,
      'contexts: [{name: x, context: {cluster: c, user: u, namespace: ns}}]',
      'current-context: x',
      '',
    ].join('\n'),
    join(at.slice(dir.length), `kc${files++}`).replace(/^\//, ''),
  );
}

async function applied(path: string): Promise<https.RequestOptions> {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  return opts;
}

const headers = (opts: https.RequestOptions) => opts.headers as Record<string, string>;

describe('a kubeconfig file', () => {
  it('reads the CA, client certificate and key relative to its own directory, and the TLS settings', async () => {
    const sub = join(dir, 'rel');
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, 'ca.pem'), 'CA');
    writeFileSync(join(sub, 'cert.pem'), 'CERT');
    writeFileSync(join(sub, 'key.pem'), 'KEY');
    const path = kubeconfig(
      'server: "https://k8s.example:6443/", certificate-authority: ca.pem, tls-server-name: api.internal',
      'client-certificate: cert.pem, client-key: key.pem',
      sub,
    );
    const opts = await applied(path);
    expect(String(opts.ca)).toBe('CA');
    expect(String(opts.cert)).toBe('CERT');
    expect(String(opts.key)).toBe('KEY');
    expect(opts.servername).toBe('api.internal');
    expect(opts.rejectUnauthorized).toBeUndefined();
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    expect(kc.getCurrentCluster()?.server).toBe('https://k8s.example:6443');
    expect(kc.getContextObject('x')?.namespace).toBe('ns');
  });

  it('takes inline (base64) data, insecure-skip-tls-verify, a token, basic auth and impersonation', async () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const opts = await applied(
      kubeconfig(
        `server: "https://k", certificate-authority-data: ${b64('CA')}, insecure-skip-tls-verify: true`,
        `client-certificate-data: ${b64('CERT')}, client-key-data: ${b64('KEY')}, token: tok, username: ann, password: pw, as: bob`,
      ),
    );
    expect([String(opts.ca), String(opts.cert), String(opts.key)]).toEqual(['CA', 'CERT', 'KEY']);
    expect(opts.rejectUnauthorized).toBe(false);
    expect(headers(opts)['Authorization']).toBe('Bearer tok');
    expect(headers(opts)['Impersonate-User']).toBe('bob');
    expect(opts.auth).toBe('ann:pw');
  });

  it('reads a token-file again once a minute, as the kubelet rotates it', async () => {
    const tokenPath = file('first\n');
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig('server: "https://k"', `token-file: ${tokenPath}`));
    const bearer = async () => {
      const opts: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      return headers(opts)['Authorization'];
    };
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now);
    expect(await bearer()).toBe('Bearer first');
    writeFileSync(tokenPath, 'second');
    clock.mockReturnValue(now + 30_000);
    expect(await bearer()).toBe('Bearer first');
    clock.mockReturnValue(now + 61_000);
    expect(await bearer()).toBe('Bearer second');
  });

  it('refuses a plain HTTP server unless insecure-skip-tls-verify says so', async () => {
    await expect(applied(kubeconfig('server: "http://k:8080"', 'token: t'))).rejects.toThrow(
      'server http://k:8080 is plain HTTP: set insecure-skip-tls-verify: true on its cluster to allow it',
    );
    const opts = await applied(
      kubeconfig('server: "http://k:8080", insecure-skip-tls-verify: true', 'token: t'),
    );
    expect(headers(opts)['Authorization']).toBe('Bearer t');
  });

  it.each([
    ['not a mapping', '- a\n- b\n', 'not a kubeconfig'],
    ['clusters not a list', 'clusters: {a: 1}\n', 'clusters must be a list'],
    ['a cluster without a name', 'clusters: [{cluster: {server: s}}]\n', 'clusters[0].name is missing'],
    [
      'a cluster without a server',
      'clusters: [{name: c, cluster: {}}]\n',
      'clusters[0].cluster.server is missing',
    ],
    [
      'a context without a cluster',
      'contexts: [{name: x, context: {user: u}}]\n',
      'contexts[0].context.cluster is missing',
    ],
    [
      'an exec plugin without a command',
      'users: [{name: u, user: {exec: {args: [a]}}}]\n',
      'users[0].user.exec.command is missing',
    ],
    ['bad YAML', 'clusters: [\n', 'must be sufficiently indented'],
  ])('says what is wrong with %s', (_what, text, message) => {
    const kc = new KubeConfig();
    expect(() => kc.loadFromFile(file(text))).toThrow(message);
  });

  it('merges KUBECONFIG files: the first entry of a name stays, and the first current-context can stay', () => {
    const a = new KubeConfig();
    a.loadFromFile(kubeconfig('server: "https://a"', 'token: a'));
    const b = new KubeConfig();
    b.loadFromString(
      'clusters: [{name: d, cluster: {server: "https://d"}}]\ncontexts: [{name: y, context: {cluster: d}}]\ncurrent-context: y\n',
    );
    a.mergeConfig(b, true);
    expect(a.getCurrentContext()).toBe('x');
    expect(a.getCluster('d')?.server).toBe('https://d');
    const other = new KubeConfig();
    other.loadFromString('clusters: [{name: d, cluster: {server: "https://other"}}]\ncurrent-context: z\n');
    a.mergeConfig(other);
    expect(a.clusters.filter((c) => c.name === 'd').map((c) => c.server)).toEqual(['https://d']);
    // Without preserveContext the merged file's current-context replaces this one's.
    expect(a.getCurrentContext()).toBe('z');
  });
});

describe('an exec credential plugin', () => {
  const counter = join(dir, 'exec-count');
  // Prints an ExecCredential and counts its runs; PLUGIN_FAIL makes it fail.
  const plugin = file(
    [
      "const fs = require('node:fs');",
      `fs.appendFileSync(${JSON.stringify(counter)}, 'x');`,
      "if (process.env.PLUGIN_FAIL) { process.stderr.write('no credentials for you\\n'); process.exit(3); }",
      'const expiry = process.argv[2];',
      'console.log(JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential",',
      '  status: { token: "exec-" + process.env.PLUGIN_WHO, clientCertificateData: "PEM-CERT", clientKeyData: "PEM-KEY",',
      '    ...(expiry ? { expirationTimestamp: expiry } : {}) } }));',
    ].join('\n'),
    'plugin.cjs',
  );
  const runs = () => {
    try {
      return readFileSync(counter, 'utf8').length;
    } catch {
      return 0;
    }
  };
  const execUser = (args: string[], env: string) =>
    `exec: {apiVersion: client.authentication.k8s.io/v1, command: ${JSON.stringify(process.execPath)}, args: ${JSON.stringify([plugin, ...args])}, env: [${env}]}`;

  async function twice(path: string): Promise<https.RequestOptions> {
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    await kc.applyToHTTPSOptions({});
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    return opts;
  }

  it('gives a token, a client certificate and key, cached until its expirationTimestamp', async () => {
    rmSync(counter, { force: true });
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const opts = await twice(
      kubeconfig('server: "https://k"', execUser([future], '{name: PLUGIN_WHO, value: ann}')),
    );
    expect(headers(opts)['Authorization']).toBe('Bearer exec-ann');
    expect([opts.cert, opts.key]).toEqual(['PEM-CERT', 'PEM-KEY']);
    expect(runs()).toBe(1);
  });

  it('is asked again when its answer has no expirationTimestamp, or it has passed', async () => {
    rmSync(counter, { force: true });
    await twice(kubeconfig('server: "https://k"', execUser([], '{name: PLUGIN_WHO, value: a}')));
    expect(runs()).toBe(2);
    const past = new Date(Date.now() - 1_000).toISOString();
    await twice(kubeconfig('server: "https://k"', execUser([past], '{name: PLUGIN_WHO, value: a}')));
    expect(runs()).toBe(4);
  });

  it('an inline token wins over the plugin', async () => {
    const opts = await applied(kubeconfig('server: "https://k"', `token: inline, ${execUser([], '')}`));
    expect(headers(opts)['Authorization']).toBe('Bearer inline');
  });

  it('a failing plugin is an error that names it and says what it printed', async () => {
    await expect(
      applied(kubeconfig('server: "https://k"', execUser([], '{name: PLUGIN_FAIL, value: "1"}'))),
    ).rejects.toThrow(`exec plugin ${process.execPath} exited with 3: no credentials for you`);
    await expect(
      applied(kubeconfig('server: "https://k"', 'exec: {command: /nonexistent/plugin}')),
    ).rejects.toThrow('exec plugin /nonexistent/plugin: spawn /nonexistent/plugin ENOENT');
  });
});

describe('the in-cluster service account', () => {
  const root = join(dir, 'sa');
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'token'), 'sa-token');
  writeFileSync(join(root, 'ca.crt'), 'SA-CA');
  writeFileSync(join(root, 'namespace'), 'routability');

  it.each([
    ['10.96.0.1', '443', 'https://10.96.0.1:443'],
    ['fd00:10:96::1', '443', 'https://[fd00:10:96::1]:443'],
    ['10.96.0.1', '8080', 'http://10.96.0.1:8080'],
  ])('host %s port %s is %s, with its token, CA and namespace', async (host, port, server) => {
    const kc = new KubeConfig();
    kc.loadFromCluster(root, { KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: port });
    expect(kc.getCurrentCluster()?.server).toBe(server);
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('routability');
    if (server.startsWith('http:')) return;
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    expect(headers(opts)['Authorization']).toBe('Bearer sa-token');
    expect(String(opts.ca)).toBe('SA-CA');
  });
});

describe('the forms left to @kubernetes/client-node', () => {
  it('an oidc auth-provider with a valid id-token sends it', async () => {
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const idToken = `${b64({ alg: 'none' })}.${b64({ exp: Math.floor(Date.now() / 1000) + 3600 })}.sig`;
    const opts = await applied(
      kubeconfig('server: "https://k"', `auth-provider: {name: oidc, config: {id-token: "${idToken}"}}`),
    );
    expect(headers(opts)['Authorization']).toBe(`Bearer ${idToken}`);
  });

  it('a proxy-url gets client-node proxy agent', async () => {
    const opts = await applied(
      kubeconfig('server: "https://k", proxy-url: "http://proxy.example:3128"', 'token: t'),
    );
    expect(opts.agent?.constructor.name).toBe('HttpsProxyAgent');
    expect(headers(opts)['Authorization']).toBe('Bearer t');
  });

  // A resolve hook in a child process reports every module loaded.
  const probe = (kubeconfigPath: string) => `
    import { register } from 'node:module';
    import { MessageChannel } from 'node:worker_threads';
    const { port1, port2 } = new MessageChannel();
    const seen = [];
    port1.on('message', (url) => seen.push(url));
    const hook = 'export async function initialize({ port }) { globalThis.port = port; }' +
      'export async function resolve(s, c, next) { const r = await next(s, c); globalThis.port.postMessage(r.url); return r; }';
    register('data:text/javascript,' + encodeURIComponent(hook), import.meta.url, { data: { port: port2 }, transferList: [port2] });
    const { loadKubeconfig } = await import(${JSON.stringify(join(process.cwd(), 'dist/kube/kubeconfig.js'))});
    const { kc } = loadKubeconfig({ kubeconfig: ${JSON.stringify(kubeconfigPath)}, env: {} });
    await kc.applyToHTTPSOptions({});
    await new Promise((r) => setTimeout(r, 100));
    port1.close();
    console.log(JSON.stringify(seen.filter((u) => u.includes('client-node')).length));
  `;
  const loads = async (path: string) =>
    Number((await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe(path)])).stdout);

  it('is loaded only for them', async () => {
    expect(await loads(kubeconfig('server: "https://k"', 'token: t'))).toBe(0);
    expect(
      await loads(kubeconfig('server: "https://k", proxy-url: "socks5://p:1080"', 'token: t')),
    ).toBeGreaterThan(0);
  });
});
