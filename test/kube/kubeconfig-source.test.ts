// Which credentials are used: controller-runtime's order (--kubeconfig, KUBECONFIG, the in-cluster
// service account, ~/.kube/config), each source tried only when the ones before it are absent.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findKubeconfig, type KubeconfigOptions } from '../../src/kube/kubeconfig-source.js';
import { loadKubeconfig } from '../../src/kube/kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-source-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfigFile(name: string, server: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: c, cluster: {server: "${server}"}}]`,
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
      '',
    ].join('\n'),
  );
  return path;
}

const home = join(dir, 'home');
mkdirSync(join(home, '.kube'), { recursive: true });
const homeFile = join(home, '.kube', 'config');
writeFileSync(homeFile, '');
const token = join(dir, 'token');
writeFileSync(token, 'x');
const IN_CLUSTER = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

/** Every source present: each row takes away the ones before the expected one. */
const BASE: KubeconfigOptions = {
  kubeconfig: '/from/flag',
  env: { ...IN_CLUSTER, KUBECONFIG: '/from/env' },
  home,
  serviceAccountTokenFile: token,
};

describe('findKubeconfig: --kubeconfig, then KUBECONFIG, then in-cluster, then ~/.kube/config', () => {
  it.each<[string, KubeconfigOptions, unknown]>([
    ['all present: the flag', {}, { kind: 'flag', path: '/from/flag' }],
    [
      'no flag: KUBECONFIG wins over the in-cluster service account',
      { kubeconfig: undefined },
      { kind: 'env', paths: ['/from/env'] },
    ],
    ['an empty flag counts as none', { kubeconfig: '' }, { kind: 'env', paths: ['/from/env'] }],
    [
      'KUBECONFIG lists several files (blank entries dropped)',
      { kubeconfig: undefined, env: { ...IN_CLUSTER, KUBECONFIG: `/a${delimiter}${delimiter} /b ` } },
      { kind: 'env', paths: ['/a', '/b'] },
    ],
    [
      'no flag, KUBECONFIG empty: the in-cluster service account',
      { kubeconfig: undefined, env: { ...IN_CLUSTER, KUBECONFIG: '' } },
      { kind: 'in-cluster' },
    ],
    [
      'in a pod without a token file: ~/.kube/config',
      { kubeconfig: undefined, env: IN_CLUSTER, serviceAccountTokenFile: join(dir, 'no-token') },
      { kind: 'home', path: homeFile },
    ],
    [
      'the service variables without a port are not a pod: ~/.kube/config',
      { kubeconfig: undefined, env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' } },
      { kind: 'home', path: homeFile },
    ],
    ['nothing else: ~/.kube/config', { kubeconfig: undefined, env: {} }, { kind: 'home', path: homeFile }],
    ['nothing at all: none', { kubeconfig: undefined, env: {}, home: join(dir, 'no-home') }, undefined],
  ])('%s', (_name, change, expected) => {
    expect(findKubeconfig({ ...BASE, ...change })).toEqual(expected);
  });

  it('loads the file KUBECONFIG names, not the service account, inside a pod', () => {
    const path = kubeconfigFile('env-config', 'https://from-env.example:6443');
    const loaded = loadKubeconfig({
      env: { ...IN_CLUSTER, KUBECONFIG: path },
      home,
      serviceAccountTokenFile: token,
    });
    expect(loaded.source).toEqual({ kind: 'env', paths: [path] });
    expect(loaded.server).toBe('https://from-env.example:6443');
    expect(loaded.description).toBe(`kubeconfig ${path} (KUBECONFIG), server https://from-env.example:6443`);
  });
});
