/**
 * The credentials src/kube/kubeconfig-auth.ts puts on a request, for the
 * forms kubeconfig-model.test.ts does not reach: a context without a cluster
 * or a user, an exec plugin (its environment, arguments, client certificate,
 * key and token, its failures, the cache by expirationTimestamp), the legacy
 * auth-provider form of exec, and basic auth without a password. The plugins
 * are small node scripts run as a real child process.
 */
import type https from 'node:https';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig, type Cluster, type User } from '../../src/kube/kubeconfig-model.js';

const CLUSTER: Cluster = {
  name: 'c',
  server: 'https://k:6443',
  caData: Buffer.from('CA').toString('base64'),
  skipTLSVerify: false,
  tlsServerName: 'api.internal',
};

/** `cluster` null: a context naming a cluster that is not there. */
function config(user: User | undefined, cluster: Cluster | null = CLUSTER): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: cluster ? [cluster] : [],
    users: user ? [user] : [],
    contexts: [{ name: 'x', cluster: cluster?.name ?? 'none', user: user?.name ?? 'none' }],
    currentContext: 'x',
  });
  return kc;
}

async function applied(kc: KubeConfig): Promise<https.RequestOptions> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  return opts;
}

/** An exec plugin: node running `script`, which prints its ExecCredential. */
const plugin = (script: string, env?: { name: string; value: string }[]) => ({
  command: process.execPath,
  args: ['-e', script],
  ...(env ? { env } : {}),
});
const credential = (status: string) =>
  `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: ${status} }))`;

afterEach(() => {
  delete process.env['ROUTABILITY_TEST_INHERITED'];
});

describe('credentials on a request', () => {
  it('a context without a user gets the cluster’s TLS and nothing else', async () => {
    const opts = await applied(config(undefined));
    expect(String(opts.ca)).toBe('CA');
    expect(opts.servername).toBe('api.internal');
    expect(opts.headers).toBeUndefined();
    expect(opts.auth).toBeUndefined();
    expect(opts.cert).toBeUndefined();
  });

  it('a context without a cluster gets the user’s credentials and no TLS settings', async () => {
    const opts = await applied(
      config({ name: 'u', token: 't', certData: Buffer.from('C').toString('base64') }, null),
    );
    expect(opts.headers).toEqual({ Authorization: 'Bearer t' });
    expect(String(opts.cert)).toBe('C');
    expect(opts.ca).toBeUndefined();
    expect(opts.servername).toBeUndefined();
    expect(opts.rejectUnauthorized).toBeUndefined();
    expect(opts.key).toBeUndefined();
  });

  it('basic auth without a password', async () => {
    expect((await applied(config({ name: 'u', username: 'ann' }))).auth).toBe('ann:');
  });

  it('an exec plugin: its args and env (over the inherited one), and its certificate, key and token', async () => {
    process.env['ROUTABILITY_TEST_INHERITED'] = 'inherited';
    const exec = plugin(
      credential(
        "{ token: process.argv[1] + '-' + process.env.ROUTABILITY_TEST_TOKEN + '-' + process.env.ROUTABILITY_TEST_INHERITED, clientCertificateData: 'CERT', clientKeyData: 'KEY' }",
      ),
      [{ name: 'ROUTABILITY_TEST_TOKEN', value: 'from-env' }],
    );
    exec.args.push('arg');
    const opts = await applied(config({ name: 'u', exec }));
    expect(opts.headers).toEqual({ Authorization: 'Bearer arg-from-env-inherited' });
    expect([opts.cert, opts.key]).toEqual(['CERT', 'KEY']);
  });

  it('an exec plugin as a legacy auth-provider, by name or by its exec config', async () => {
    const exec = plugin(credential("{ token: 'legacy' }"));
    for (const authProvider of [
      { name: 'exec', config: { exec } },
      { name: 'custom', config: { exec } },
    ]) {
      const opts = await applied(config({ name: 'u', authProvider }));
      expect(opts.headers, authProvider.name).toEqual({ Authorization: 'Bearer legacy' });
    }
  });

  it('an inline token wins over the plugin’s; a plugin without a token adds no header', async () => {
    const exec = plugin(credential("{ token: 'plugin' }"));
    expect((await applied(config({ name: 'u', exec, token: 'inline' }))).headers).toEqual({
      Authorization: 'Bearer inline',
    });
    const opts = await applied(
      config({ name: 'u', exec: plugin(credential("{ clientCertificateData: 'C' }")) }),
    );
    expect(opts.headers).toEqual({});
    expect(opts.cert).toBe('C');
    expect(opts.key).toBeUndefined();
  });

  it('a plugin that gives only a token leaves the kubeconfig’s client certificate and key', async () => {
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    const exec = plugin(credential("{ token: 'p' }"));
    const opts = await applied(config({ name: 'u', exec, certData: b64('CERT'), keyData: b64('KEY') }));
    expect([String(opts.cert), String(opts.key)]).toEqual(['CERT', 'KEY']);
    expect(opts.headers).toEqual({ Authorization: 'Bearer p' });
  });

  it('a plugin’s answer is kept until its expirationTimestamp, asked again without one', async () => {
    const token = 'String(process.hrtime.bigint())';
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const cached = config({
      name: 'u',
      exec: plugin(credential(`{ token: ${token}, expirationTimestamp: '${later}' }`)),
    });
    const first = (await applied(cached)).headers;
    expect((await applied(cached)).headers).toEqual(first);
    const fresh = config({ name: 'u', exec: plugin(credential(`{ token: ${token} }`)) });
    const a = (await applied(fresh)).headers;
    expect((await applied(fresh)).headers).not.toEqual(a);
    const past = new Date(Date.now() - 1_000).toISOString();
    const expired = config({
      name: 'u',
      exec: plugin(credential(`{ token: ${token}, expirationTimestamp: '${past}' }`)),
    });
    const b = (await applied(expired)).headers;
    expect((await applied(expired)).headers).not.toEqual(b);
  });

  it.each([
    [
      'exits non-zero',
      "process.stderr.write('  no login  \\n'); process.exit(3)",
      /^exec plugin .+ exited with 3: no login$/,
    ],
    ['prints no JSON', "process.stdout.write('hello')", /printed no ExecCredential with a status$/],
    ['prints no status', "process.stdout.write('{}')", /printed no ExecCredential with a status$/],
    [
      'prints a null status',
      'process.stdout.write(\'{"status":null}\')',
      /printed no ExecCredential with a status$/,
    ],
    [
      'prints a text status',
      'process.stdout.write(\'{"status":"x"}\')',
      /printed no ExecCredential with a status$/,
    ],
  ])('a plugin that %s fails the request, saying so', async (_, script, error) => {
    await expect(applied(config({ name: 'u', exec: plugin(script) }))).rejects.toThrow(error);
  });
});
