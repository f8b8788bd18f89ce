/**
 * The kubeconfig model (src/kube/kubeconfig-model.ts) on documents of every
 * shape: lists absent, null, not lists, with entries that are not mappings or
 * have no body; a user's token-file (made absolute by the file it is in), exec
 * env entries without a name or value, the service account's config from its
 * directory and environment, and merging files (current-context, duplicates).
 * kubeconfig-model.test.ts applies credentials; this reads what is kept.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KubeConfig } from '../../src/kube/kubeconfig-model.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-shapes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const loaded = (yaml: string): KubeConfig => {
  const kc = new KubeConfig();
  kc.loadFromString(yaml);
  return kc;
};
const CLUSTER = 'clusters: [{name: c, cluster: {server: "https://k:6443/"}}]';

describe('kubeconfig documents', () => {
  it('a fresh model holds nothing', () => {
    const kc = new KubeConfig();
    expect([kc.clusters, kc.users, kc.contexts]).toEqual([[], [], []]);
    expect(kc.getCurrentContext()).toBe('');
    expect(kc.getUser('u')).toBeUndefined();
    const one = loaded('users: [{name: a}]');
    expect(one.getUser('a')?.name).toBe('a');
    expect(one.getUser('b')).toBeUndefined();
  });

  it.each([
    ['absent lists are empty', 'current-context: x', undefined],
    ['null lists are empty', 'clusters: null\nusers: ~\ncontexts: null', undefined],
    ['a list that is a mapping', 'clusters: {c: {}}', 'clusters must be a list'],
    ['an entry that is not a mapping', 'users: [u]', 'users[0].name is missing'],
    ['an entry with an empty name', 'contexts: [{name: ""}]', 'contexts[0].name is missing'],
    ['a cluster without its body', 'clusters: [{name: c}]', 'clusters[0].cluster is missing'],
    [
      'a cluster body that is a list',
      'clusters: [{name: c, cluster: [1]}]',
      'clusters[0].cluster is missing',
    ],
    ['a context without its body', `${CLUSTER}\ncontexts: [{name: x}]`, 'contexts[0].context is missing'],
    ['a context body that is text', 'contexts: [{name: x, context: c}]', 'contexts[0].context is missing'],
  ])('%s', (_, yaml, error) => {
    if (error === undefined) {
      const kc = loaded(yaml);
      expect([kc.clusters, kc.users, kc.contexts]).toEqual([[], [], []]);
    } else expect(() => loaded(yaml)).toThrow(new Error(error));
  });

  it('a user without a body has no credentials; one whose body is a list neither', () => {
    const kc = loaded('users: [{name: a}, {name: b, user: [1]}]');
    expect(kc.users.map((u) => [u.name, u.token, u.authProvider, u.exec])).toEqual([
      ['a', undefined, undefined, undefined],
      ['b', undefined, undefined, undefined],
    ]);
  });

  it('exec env entries keep their name and value, empty when missing or not a mapping', () => {
    const kc = loaded(
      'users: [{name: u, user: {exec: {command: c, apiVersion: v1, env: [{name: A, value: "1"}, {name: B}, {value: "2"}, 5]}}}]',
    );
    expect(kc.users[0]!.exec).toEqual({
      command: 'c',
      args: undefined,
      apiVersion: 'v1',
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '' },
        { name: '', value: '2' },
        { name: '', value: '' },
      ],
    });
  });

  it('a token-file is a tokenFile provider, made absolute by the file it is in; an auth-provider is kept as is', () => {
    const path = join(dir, 'kc');
    writeFileSync(
      path,
      [
        'users:',
        '- {name: rel, user: {token-file: tokens/t}}',
        '- {name: abs, user: {token-file: /etc/t}}',
        '- {name: other, user: {auth-provider: {name: oidc, config: {tokenFile: rel}}}}',
        '- {name: bare, user: {auth-provider: {name: tokenFile}}}',
      ].join('\n'),
    );
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    expect(kc.users.map((u) => u.authProvider)).toEqual([
      { name: 'tokenFile', config: { tokenFile: join(dir, 'tokens/t') } },
      { name: 'tokenFile', config: { tokenFile: '/etc/t' } },
      { name: 'oidc', config: { tokenFile: 'rel' } },
      { name: 'tokenFile', config: {} },
    ]);
    expect(loaded('users: [{name: rel, user: {token-file: t}}]').users[0]!.authProvider).toEqual({
      name: 'tokenFile',
      config: { tokenFile: 't' },
    });
  });

  it('the service account: server from the environment, its CA, token file and namespace', () => {
    const root = mkdtempSync(join(dir, 'sa-'));
    writeFileSync(join(root, 'namespace'), 'apps');
    const kc = new KubeConfig();
    kc.loadFromCluster(root, { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' });
    expect(kc.getCurrentCluster()).toEqual({
      name: 'inCluster',
      server: 'https://[fd00::1]:443',
      caFile: join(root, 'ca.crt'),
      skipTLSVerify: false,
    });
    expect(kc.getCurrentUser()).toEqual({
      name: 'inClusterUser',
      authProvider: { name: 'tokenFile', config: { tokenFile: join(root, 'token') } },
    });
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('apps');
    for (const port of ['80', '8080', '8001']) {
      kc.loadFromCluster(join(dir, 'nowhere'), {
        KUBERNETES_SERVICE_HOST: '10.0.0.1',
        KUBERNETES_SERVICE_PORT: port,
      });
      expect(kc.getCurrentCluster()?.server).toBe(`http://10.0.0.1:${port}`);
      expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBeUndefined();
    }
    kc.loadFromCluster(join(dir, 'nowhere'), {});
    expect(kc.getCurrentCluster()?.server).toBe('https://:');
  });

  it('merging: the other file’s current-context unless kept, and the first entry of a name kept', () => {
    const a = () =>
      loaded(
        `${CLUSTER}\nusers: [{name: u}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x`,
      );
    const other = (yaml: string) => loaded(yaml);
    const merged = a();
    merged.mergeConfig(other('contexts: [{name: y, context: {cluster: c}}]\ncurrent-context: y'));
    expect(merged.getCurrentContext()).toBe('y');
    const kept = a();
    kept.mergeConfig(other('current-context: y'), true);
    expect(kept.getCurrentContext()).toBe('x');
    const none = a();
    none.mergeConfig(other('users: [{name: v}]'));
    expect(none.getCurrentContext()).toBe('x');
    expect(none.users.map((u) => u.name)).toEqual(['u', 'v']);
    // A name both define keeps this file's entry, as kubectl does (two k3s files name all `default`).
    const twice = a();
    twice.mergeConfig(
      other(
        'clusters: [{name: c, cluster: {server: "https://other"}}]\nusers: [{name: u, user: {token: t2}}]\n' +
          'contexts: [{name: x, context: {cluster: c, namespace: n2}}]',
      ),
    );
    expect([twice.clusters.length, twice.users.length, twice.contexts.length]).toEqual([1, 1, 1]);
    expect(twice.getCurrentCluster()?.server).not.toBe('https://other');
    expect(twice.getCurrentUser()?.token).toBeUndefined();
    expect(twice.getContextObject('x')?.namespace).toBeUndefined();
  });
});
