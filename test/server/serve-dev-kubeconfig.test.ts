/**
 * The quick start (`npm start`, i.e. `serve --dev`) on a workstation whose kubeconfig names no
 * cluster any more: a missing KUBECONFIG file, an empty ~/.kube/config, `current-context: ""` (what
 * `kind delete cluster` leaves), a context naming a cluster or user the file does not define. Each
 * is "no cluster": ready within 10 s on the offline defaults, one log line naming the kubeconfig
 * and why, and the README's out-of-range example denied. A kubeconfig that names a server that is
 * down keeps the server not ready, naming the flags; without --dev nothing of this applies.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { httpGet, httpsPost } from '../kit/http.js';
import {
  startDevServe,
  startServeWithCerts,
  type DevServer,
  type ServingWithCerts,
} from '../kit/server-process.js';

const REPO = join(import.meta.dirname, '..', '..');
/** The request the quick start (docs/dev/quick-start.md) sends: a Cluster address outside 10.96.0.0/12. */
const README_EXAMPLE = readFileSync(
  join(REPO, 'test', 'fixtures', 'reviews', 'create-cluster-outside-range.json'),
);

const scratch = mkdtempSync(join(tmpdir(), 'dev-kubeconfig-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const certDir = join(scratch, 'certs');

const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

function kubeconfig(parts: { cluster?: boolean; user?: boolean; current?: string; server?: string }): string {
  const server = parts.server ?? 'https://127.0.0.1:6443';
  return [
    'apiVersion: v1',
    'kind: Config',
    parts.cluster === false
      ? 'clusters: []'
      : `clusters:\n- name: kind-kind\n  cluster: {server: "${server}"}`,
    parts.user === false ? 'users: []' : 'users:\n- name: kind-kind\n  user: {token: t}',
    'contexts:\n- name: kind-kind\n  context: {cluster: kind-kind, user: kind-kind}',
    `current-context: ${JSON.stringify(parts.current ?? 'kind-kind')}`,
    '',
  ].join('\n');
}

interface Shape {
  /** The kubeconfig file the server finds, and the environment that points it there. */
  setup(dir: string): { path: string; env: NodeJS.ProcessEnv };
  reason: RegExp;
}

const viaKubeconfigVariable = (content: string) => (dir: string) => {
  const path = join(dir, 'config');
  writeFileSync(path, content);
  return { path, env: { KUBECONFIG: path } };
};

const SHAPES: Record<string, Shape> = {
  'a KUBECONFIG naming a missing file': {
    setup: (dir) => {
      const path = join(dir, 'deleted.kubeconfig');
      return { path, env: { KUBECONFIG: path } };
    },
    reason: /deleted\.kubeconfig does not exist/,
  },
  'an empty ~/.kube/config': {
    setup: (dir) => {
      mkdirSync(join(dir, '.kube'));
      const path = join(dir, '.kube', 'config');
      writeFileSync(path, '');
      return { path, env: { HOME: dir } };
    },
    reason: /config is empty/,
  },
  'current-context "" (after kind delete cluster)': {
    setup: viaKubeconfigVariable(
      'apiVersion: v1\nkind: Config\nclusters: null\ncontexts: null\nusers: null\npreferences: {}\ncurrent-context: ""\n',
    ),
    reason: /its current-context is empty/,
  },
  'a context naming a cluster the file does not define': {
    setup: viaKubeconfigVariable(kubeconfig({ cluster: false })),
    reason: /context "kind-kind" names cluster "kind-kind", which it does not define/,
  },
  'a context naming a user the file does not define': {
    setup: viaKubeconfigVariable(kubeconfig({ user: false })),
    reason: /context "kind-kind" names user "kind-kind", which it does not define/,
  },
};

/** The headline lines of the readable log (each entry's first line, without its fields). */
const headlines = (output: string) =>
  output.split('\n').filter((l) => /^\[\d\d:\d\d:\d\d(\.\d+)?\] [A-Z]+: /.test(l));

async function readyWithin(healthPort: number, deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    if ((await httpGet(healthPort, '/readyz')).status === 200) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

function folder(name: string): string {
  const dir = join(scratch, name.replace(/\W+/g, '-'));
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe('serve --dev with a kubeconfig that names no cluster: the offline defaults', () => {
  it.each(Object.entries(SHAPES))(
    '%s',
    async (name, shape) => {
      const dir = folder(name);
      const { path, env } = shape.setup(dir);
      const dev: DevServer = startDevServe(['--cert-dir', certDir], {
        HOME: dir,
        KUBECONFIG: '',
        ROUTABILITY_WEBHOOK_SERVICE_CIDR: '',
        ROUTABILITY_WEBHOOK_GEP_REVISION: '',
        ...env,
      });
      running.push(dev);
      const { port, healthPort } = await dev.started;
      // 10 s from the moment it listens: process start-up itself takes seconds on a loaded CI machine.
      expect(await readyWithin(healthPort, Date.now() + 10_000), dev.output()).toBe(true);

      const answer = await httpsPost(port, '/validate', README_EXAMPLE);
      expect(answer.status).toBe(200);
      const response = (
        JSON.parse(answer.body) as { response: { allowed: boolean; status: { message: string } } }
      ).response;
      expect(response.allowed).toBe(false);
      expect(response.status.message).toContain('10.96.0.0/12');

      const verbose = JSON.parse((await httpGet(healthPort, '/readyz?verbose')).body) as {
        detail: { serviceRanges: { source: string }; gepRevision: { revision: string } };
      };
      expect(verbose.detail.serviceRanges.source).toMatch(
        /^--dev default 10\.96\.0\.0\/12 \(--dev ignored kubeconfig /,
      );
      expect(verbose.detail.gepRevision.revision).toBe('provisional');

      // One line names the ignored kubeconfig and why; no other line names it.
      const naming = headlines(dev.output()).filter((l) => l.includes(path));
      expect(naming, dev.output()).toHaveLength(1);
      expect(naming[0]).toMatch(/WARN: --dev: ignoring kubeconfig /);
      expect(naming[0]).toMatch(shape.reason);
    },
    60_000,
  );

  it('a kubeconfig naming a server that is down is still a cluster: 503, and /readyz names the flag', async () => {
    const dir = folder('down');
    const path = join(dir, 'config');
    writeFileSync(path, kubeconfig({ server: 'http://127.0.0.1:9' }));
    const dev = startDevServe(['--cert-dir', certDir], {
      HOME: dir,
      KUBECONFIG: path,
      ROUTABILITY_WEBHOOK_SERVICE_CIDR: '',
      ROUTABILITY_WEBHOOK_GEP_REVISION: '',
    });
    running.push(dev);
    const { port, healthPort } = await dev.started;
    expect((await httpsPost(port, '/validate', README_EXAMPLE)).status).toBe(503);
    const ready = await httpGet(healthPort, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatch(/gep-revision: cannot read crd\/.* server http:\/\/127\.0\.0\.1:9 /);
    expect(ready.body).toContain('set --gep-revision provisional or experimental');
    expect(dev.output()).not.toContain('--dev: ignoring');
  }, 60_000);
});

describe('without --dev, a kubeconfig that names no cluster is a cluster that cannot be read', () => {
  it('current-context "": not ready, naming the Gateway CRD and the flag', async () => {
    const dir = folder('no-dev');
    const path = join(dir, 'config');
    writeFileSync(path, kubeconfig({ current: '' }));
    const served: ServingWithCerts = await startServeWithCerts(['--service-cidr', '10.96.0.0/12'], {
      HOME: dir,
      KUBECONFIG: path,
      ROUTABILITY_WEBHOOK_GEP_REVISION: '',
    });
    running.push(served);
    const { port, healthPort } = served.server;
    expect((await httpsPost(port, '/validate', README_EXAMPLE, { rejectUnauthorized: false })).status).toBe(
      503,
    );
    const ready = await httpGet(healthPort, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatch(/cannot read the Gateway CRD: .*has no current cluster/);
    expect(served.server.logs.some((l) => String(l['msg']).includes('--dev: ignoring'))).toBe(false);
  }, 60_000);
});
