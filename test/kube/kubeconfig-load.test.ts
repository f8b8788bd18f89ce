/**
 * Loading the credentials findKubeconfig chose (src/kube/kubeconfig.ts) and `serve --dev`'s check
 * that they name a cluster at all (src/kube/dev-kubeconfig.ts), in process: the words of each
 * refusal, the description of each source, the files KUBECONFIG lists merged in order, and the one
 * line --dev logs when it ignores a kubeconfig. test/cluster/serve-dev-kubeconfig.test.ts runs the
 * built server through the same shapes; this file is what the mutation run of src/kube can see.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { devIgnoredKubeconfig } from '../../src/kube/dev-kubeconfig.js';
import {
  describeKubeconfigSource,
  NO_KUBECONFIG_REASON,
  type KubeconfigOptions,
} from '../../src/kube/kubeconfig-source.js';
import { loadKubeconfig, readKubeconfig } from '../../src/kube/kubeconfig.js';
import { capturingLogger } from '../kit/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Parts {
  readonly cluster?: string;
  readonly server?: string;
  readonly user?: string | undefined;
  readonly contextCluster?: string;
  readonly contextUser?: string | undefined;
  readonly current?: string;
  readonly context?: string;
}

/** A kubeconfig file: one cluster, one user, one context naming them, that context current. */
function file(name: string, parts: Parts = {}): string {
  const cluster = parts.cluster ?? 'c';
  const user = 'user' in parts ? parts.user : 'u';
  const contextUser = 'contextUser' in parts ? parts.contextUser : 'u';
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: ${cluster}, cluster: {server: "${parts.server ?? 'https://a.example:6443'}"}}]`,
      user === undefined ? 'users: []' : `users: [{name: ${user}, user: {token: t}}]`,
      `contexts: [{name: ${parts.context ?? 'x'}, context: {cluster: ${parts.contextCluster ?? cluster}${
        contextUser === undefined ? '' : `, user: ${contextUser}`
      }}}]`,
      `current-context: ${JSON.stringify(parts.current ?? 'x')}`,
      '',
    ].join('\n'),
  );
  return path;
}

const none: KubeconfigOptions = { env: {}, home: join(dir, 'no-home') };

describe('describeKubeconfigSource', () => {
  it.each([
    [{ kind: 'flag', path: '/f' } as const, 'kubeconfig /f (--kubeconfig)'],
    [{ kind: 'in-cluster' } as const, 'in-cluster service account'],
    [{ kind: 'env', paths: ['/a', '/b'] } as const, `kubeconfig /a${delimiter}/b (KUBECONFIG)`],
    [{ kind: 'home', path: '/h/.kube/config' } as const, 'kubeconfig /h/.kube/config'],
  ])('%j is "%s"', (source, words) => {
    expect(describeKubeconfigSource(source)).toBe(words);
  });
});

describe('loadKubeconfig', () => {
  it('without any source says there are no credentials, naming every place it looked', () => {
    expect(() => loadKubeconfig(none)).toThrow(NO_KUBECONFIG_REASON);
    expect(NO_KUBECONFIG_REASON).toBe(
      'no Kubernetes credentials found (not running in a cluster, no --kubeconfig, KUBECONFIG unset, ~/.kube/config missing)',
    );
  });

  it('loads the --kubeconfig file: its server, and a description naming the flag and the server', () => {
    const path = file('flag', { server: 'https://flag.example:6443' });
    const loaded = loadKubeconfig({ ...none, kubeconfig: path });
    expect(loaded.source).toEqual({ kind: 'flag', path });
    expect(loaded.server).toBe('https://flag.example:6443');
    expect(loaded.description).toBe(`kubeconfig ${path} (--kubeconfig), server https://flag.example:6443`);
    expect(loaded.kc.getCurrentCluster()?.server).toBe('https://flag.example:6443');
  });

  it('loads ~/.kube/config when nothing else is there', () => {
    const home = join(dir, 'home');
    mkdirSync(join(home, '.kube'), { recursive: true });
    const path = file(join('home', '.kube', 'config'), { server: 'https://home.example' });
    const loaded = loadKubeconfig({ env: {}, home });
    expect(loaded.source).toEqual({ kind: 'home', path });
    expect(loaded.description).toBe(`kubeconfig ${path}, server https://home.example`);
  });

  it('a file the client cannot read is "cannot load <source>: <its words>" on one line', () => {
    const path = join(dir, 'not-yaml');
    writeFileSync(path, 'clusters: [\n  {\n');
    expect(() => loadKubeconfig({ ...none, kubeconfig: path })).toThrow(
      new RegExp(`^cannot load kubeconfig ${path} \\(--kubeconfig\\): [^\\n]+$`),
    );
    expect(() => loadKubeconfig({ ...none, kubeconfig: join(dir, 'absent') })).toThrow(
      `cannot load kubeconfig ${join(dir, 'absent')} (--kubeconfig): `,
    );
  });

  it('a file whose current context names no cluster says so, and what to check', () => {
    const path = file('no-current', { current: '' });
    expect(() => loadKubeconfig({ ...none, kubeconfig: path })).toThrow(
      `kubeconfig ${path} (--kubeconfig) has no current cluster (check current-context)`,
    );
  });
});

describe('readKubeconfig with KUBECONFIG naming several files', () => {
  it('reads the first, merges the others in order, and passes over one that does not exist', () => {
    const first = file('first', { cluster: 'one', server: 'https://one.example' });
    const second = file('second', {
      cluster: 'two',
      server: 'https://two.example',
      user: 'v',
      contextUser: 'v',
      context: 'y',
      current: 'y',
    });
    const kc = readKubeconfig({ kind: 'env', paths: [first, join(dir, 'missing'), second] });
    expect(kc.clusters.map((c) => [c.name, c.server])).toEqual([
      ['one', 'https://one.example'],
      ['two', 'https://two.example'],
    ]);
    // The first file's current-context is kept (kubectl's rule: the first file to set it wins).
    expect(kc.getCurrentContext()).toBe('x');
    expect(kc.getCurrentCluster()?.server).toBe('https://one.example');
  });

  it("keeps the first file's entry of a name both define, as kubectl does (two k3s files)", () => {
    // k3s names its cluster, user and context `default`.
    const k3s = (name: string, server: string) =>
      file(name, { cluster: 'default', server, context: 'default', current: 'default' });
    const first = k3s('k3s-a', 'https://a.example');
    const second = k3s('k3s-b', 'https://b.example');
    const kc = readKubeconfig({ kind: 'env', paths: [first, second] });
    expect(kc.clusters.map((c) => [c.name, c.server])).toEqual([['default', 'https://a.example']]);
    expect([kc.users.length, kc.contexts.length]).toEqual([1, 1]);
    expect(kc.getCurrentCluster()?.server).toBe('https://a.example');
    // The other order: the other file's entries win.
    expect(readKubeconfig({ kind: 'env', paths: [second, first] }).getCurrentCluster()?.server).toBe(
      'https://b.example',
    );
  });

  it('takes current-context from a later file when the first sets none', () => {
    const first = file('no-current', { cluster: 'one', current: '' });
    const second = file('with-current', {
      cluster: 'two',
      server: 'https://two.example',
      context: 'y',
      current: 'y',
    });
    const kc = readKubeconfig({ kind: 'env', paths: [first, second] });
    expect(kc.getCurrentContext()).toBe('y');
    expect(kc.getCurrentCluster()?.server).toBe('https://two.example');
  });

  it('a first file that does not exist is an error (kubectl would skip it; the source named it first)', () => {
    expect(() => readKubeconfig({ kind: 'env', paths: [join(dir, 'missing-first')] })).toThrow();
  });
});

describe('devIgnoredKubeconfig (serve --dev)', () => {
  interface Row {
    readonly name: string;
    readonly options: () => KubeconfigOptions;
    /** The reason, or undefined when the kubeconfig is used (or there is none to ignore). */
    readonly reason: ((path: string) => string) | undefined;
  }
  const viaFlag = (path: string): KubeconfigOptions => ({ ...none, kubeconfig: path });
  const ROWS: readonly Row[] = [
    { name: 'no kubeconfig at all: nothing to ignore', options: () => none, reason: undefined },
    {
      name: 'the in-cluster service account: never ignored',
      options: () => {
        const token = join(dir, 'token');
        writeFileSync(token, 't');
        return {
          env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' },
          home: join(dir, 'no-home'),
          serviceAccountTokenFile: token,
        };
      },
      reason: undefined,
    },
    { name: 'a usable kubeconfig: used', options: () => viaFlag(file('usable')), reason: undefined },
    {
      name: 'a file that does not exist',
      options: () => viaFlag(join(dir, 'gone')),
      reason: (p) => `${p} does not exist`,
    },
    {
      name: 'KUBECONFIG naming a file that does not exist first',
      options: () => ({ ...none, env: { KUBECONFIG: `${join(dir, 'gone')}${delimiter}${file('later')}` } }),
      reason: (p) => `${p} does not exist`,
    },
    {
      name: 'an empty file (blank lines only)',
      options: () => {
        writeFileSync(join(dir, 'empty'), '\n  \n');
        return viaFlag(join(dir, 'empty'));
      },
      reason: (p) => `${p} is empty`,
    },
    {
      name: 'an empty current-context',
      options: () => viaFlag(file('no-context', { current: '' })),
      reason: () => 'its current-context is empty',
    },
    {
      name: 'a current-context naming no context',
      options: () => viaFlag(file('other-context', { current: 'elsewhere' })),
      reason: () => 'its current-context "elsewhere" names no context in it',
    },
    {
      name: 'a context naming a cluster the file does not define (kind delete cluster)',
      options: () => viaFlag(file('no-cluster', { contextCluster: 'kind-kind' })),
      reason: () => 'context "x" names cluster "kind-kind", which it does not define',
    },
    {
      name: 'a context naming a user the file does not define',
      options: () => viaFlag(file('no-user', { user: undefined })),
      reason: () => 'context "x" names user "u", which it does not define',
    },
    {
      name: 'a context naming no user at all: used',
      options: () => viaFlag(file('userless', { user: undefined, contextUser: undefined })),
      reason: undefined,
    },
    {
      name: 'a file the client cannot parse',
      options: () => {
        writeFileSync(join(dir, 'broken'), 'clusters: [\n  {\n');
        return viaFlag(join(dir, 'broken'));
      },
      reason: () => 'cannot load it: ',
    },
  ];

  it.each(ROWS)('$name', async (row) => {
    const options = row.options();
    const { logger, lines } = capturingLogger();
    const answer = await devIgnoredKubeconfig(options, logger);
    if (row.reason === undefined) {
      expect(answer).toBeUndefined();
      expect(lines).toEqual([]);
      return;
    }
    const path = options.kubeconfig ?? (options.env?.['KUBECONFIG'] ?? '').split(delimiter)[0]!;
    const which = options.kubeconfig
      ? `kubeconfig ${path} (--kubeconfig)`
      : `kubeconfig ${options.env!['KUBECONFIG']!} (KUBECONFIG)`;
    const reason = row.reason(path);
    expect(answer?.startsWith(`--dev ignored ${which}: ${reason}`)).toBe(true);
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line.level).toBe(40);
    expect(line['component']).toBe('cluster');
    expect(line['kubeconfig']).toBe(which);
    expect(String(line['reason']).startsWith(reason)).toBe(true);
    expect(answer).toBe(`--dev ignored ${which}: ${String(line['reason'])}`);
    expect(line.msg).toBe(
      `--dev: ignoring ${which}: ${String(line['reason'])}; no cluster, so service ranges and the GEP-5093 revision take their offline defaults`,
    );
  });

  it('a path it cannot read as a file says so, with the error', async () => {
    const path = join(dir, 'a-folder');
    mkdirSync(path);
    const { logger } = capturingLogger();
    expect(await devIgnoredKubeconfig(viaFlag(path), logger)).toBe(
      `--dev ignored kubeconfig ${path} (--kubeconfig): cannot read ${path}: EISDIR: illegal operation on a directory, read`,
    );
  });
});
