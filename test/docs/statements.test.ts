/**
 * Sentences of the docs that describe behaviour, checked against that behaviour. Each block names
 * the doc it protects; the built server is started the way the sentence says a user starts it.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/rules/index.js';
import { all, one, render } from '../chart/helm.js';
import { FakeApiServer, serviceCidr } from '../kit/fake-apiserver.js';
import { testApp } from '../kit/app.js';
import { runCli, startDevServe as startDev, startServe, type RunningServer } from '../kit/server-process.js';
import { httpGet, httpsPost } from '../kit/http.js';
import { writeCerts, type CertFiles } from '../kit/key-files.js';
import { REPO } from './markdown.js';
import { eventually, sleep } from '../kit/eventually.js';

const read = (path: string) => readFileSync(join(REPO, path), 'utf8');
const FIXTURE = join(REPO, 'test', 'fixtures', 'reviews', 'create-cluster-outside-range.json');

const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});
const scratch = mkdtempSync(join(tmpdir(), 'doc-statements-'));
/** A fresh folder in the scratch space (writeCerts needs it to exist). */
const folder = (name: string) => {
  const dir = join(scratch, `${name}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('docs/dev/quick-start.md: where `npm start` gets its service ranges', () => {
  const emptyHome = join(scratch, 'home');
  const certDir = join(scratch, 'dev-certs');

  it("with no kubeconfig: kubeadm's default range, and the quick start's two curl lines work", async () => {
    const dev = startDev(['--cert-dir', certDir], {
      HOME: emptyHome,
      KUBECONFIG: '',
      ROUTABILITY_WEBHOOK_SERVICE_CIDR: '',
    });
    running.push(dev);
    const { port, healthPort } = await dev.started;
    expect(read('docs/dev/quick-start.md')).toContain(
      "kubeadm's default `10.96.0.0/12` when there is no usable kubeconfig",
    );
    // The quick start's own curl lines, pointed at this server's ports.
    const readme = read('docs/dev/quick-start.md');
    const block = /```sh\n(curl -sk https:\/\/localhost:8443[\s\S]*?)```/.exec(readme)![1]!;
    const script = block
      .replaceAll('localhost:8443', `localhost:${port}`)
      .replaceAll('localhost:8080', `localhost:${healthPort}`);
    const out = await new Promise<string>((resolve, reject) =>
      execFile('bash', ['-ec', script], { cwd: REPO }, (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      ),
    );
    // Two JSON answers, back to back: the review's, then /readyz?verbose's.
    const split = out.indexOf('{"ready"');
    expect(split, out).toBeGreaterThan(0);
    expect(JSON.parse(out.slice(0, split)).response.allowed).toBe(false);
    const ready = JSON.parse(out.slice(split)) as { ready: boolean; detail: unknown };
    expect(ready.ready).toBe(true);
    expect(JSON.stringify(ready.detail)).toContain('10.96.0.0/12');
  }, 90_000);

  it('with a kubeconfig whose cluster is unreachable: /validate answers 503 and /readyz says why', async () => {
    const kubeconfig = join(scratch, 'unreachable.kubeconfig');
    writeFileSync(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "http://127.0.0.1:9"}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n',
    );
    const dev = startDev(['--cert-dir', certDir], {
      HOME: emptyHome,
      KUBECONFIG: kubeconfig,
      ROUTABILITY_WEBHOOK_SERVICE_CIDR: '',
    });
    running.push(dev);
    const { port, healthPort } = await dev.started;
    const answer = await httpsPost(port, '/validate', readFileSync(FIXTURE));
    expect(answer.status).toBe(503);
    const ready = await httpGet(healthPort, '/readyz');
    expect(ready.status).toBe(503);
    expect(read('docs/dev/quick-start.md')).toContain(
      'While a configured\ncluster cannot be reached, `/validate` answers 503 and `/readyz` says why.',
    );
    // …and the quick start's way out: give the range (and, as a kubeconfig is set, the GEP revision).
    const given = startDev(
      ['--cert-dir', certDir, '--service-cidr', '10.96.0.0/12', '--gep-revision', 'provisional'],
      {
        HOME: emptyHome,
        KUBECONFIG: kubeconfig,
      },
    );
    running.push(given);
    const ports = await given.started;
    expect((await httpsPost(ports.port, '/validate', readFileSync(FIXTURE))).status).toBe(200);
    expect(read('docs/dev/quick-start.md')).toContain('`npm start -- --service-cidr 10.96.0.0/12`');
    expect(read('docs/dev/quick-start.md')).toContain('`--gep-revision provisional`');
  }, 90_000);

  it('metrics.md and operations.md: no service_ranges series under --dev with the built-in range, one with --service-cidr', async () => {
    const dev = startDev(['--cert-dir', certDir], {
      HOME: emptyHome,
      KUBECONFIG: '',
      ROUTABILITY_WEBHOOK_SERVICE_CIDR: '',
    });
    running.push(dev);
    const { healthPort } = await dev.started;
    expect((await httpGet(healthPort, '/metrics')).body).not.toMatch(
      /^routability_webhook_service_ranges\{/m,
    );
    const flagged = startDev(['--cert-dir', certDir, '--service-cidr', '10.96.0.0/12'], {
      HOME: emptyHome,
      KUBECONFIG: '',
    });
    running.push(flagged);
    const ports = await flagged.started;
    expect((await httpGet(ports.healthPort, '/metrics')).body).toMatch(
      /^routability_webhook_service_ranges\{cidr="10\.96\.0\.0\/12"/m,
    );
    expect(read('docs/metrics.md')).toContain('under `serve --dev` with the built-in default range');
    expect(read('docs/operations.md')).toContain('under `--dev` with the built-in default it is empty');
  }, 90_000);
});

describe('log levels (operations.md, reliability.md, install-reference.md)', () => {
  let certs: CertFiles;
  let server: RunningServer;

  it('refused requests log at the level the docs grep for; a 503 answer logs nothing', async () => {
    certs = await writeCerts(folder('certs-logs'));
    server = await startServe(
      [
        '--service-cidr',
        '10.96.0.0/12',
        '--max-body-bytes',
        '4096',
        '--tls-cert-file',
        certs.certFile,
        '--tls-private-key-file',
        certs.keyFile,
      ],
      { KUBECONFIG: '' },
    );
    running.push(server);
    const ca = certs.generated.caCert;
    const refused = [
      await httpsPost(server.port, '/validate', '{not json', { ca }),
      await httpsPost(server.port, '/validate', '', { ca }),
      await httpsPost(server.port, '/validate', '{}', { ca }),
      await httpsPost(server.port, '/validate', 'x', { ca, contentType: 'text/plain' }),
      await httpsPost(server.port, '/validate', JSON.stringify({ pad: 'x'.repeat(8192) }), { ca }),
    ];
    expect(refused.map((r) => r.status)).toEqual([400, 400, 400, 400, 413]);
    await eventually(
      async () => server.logs.filter((l) => (l['level'] as number) >= 40).length >= 5,
      'five log lines',
    );
    const levels = new Set(
      server.logs.filter((l) => l['msg'] !== 'review' && (l['level'] as number) >= 40).map((l) => l['level']),
    );
    expect([...levels]).toEqual([40]);

    // Every `"level":N` a doc tells the reader to grep for is that level.
    for (const doc of [
      'docs/operations.md',
      'docs/dev/reliability.md',
      'docs/install.md',
      'docs/install-reference.md',
      'README.md',
      'docs/commands.md',
    ]) {
      for (const m of read(doc).matchAll(/"level":(\d+)/g))
        expect(`${doc}: ${m[0]}`).toBe(`${doc}: "level":40`);
    }
    expect(read('docs/dev/reliability.md')).toMatch(
      /refused requests\n\s*\(undecodable reviews, over-limit bodies, wrong content type\) at level 40/,
    );
    expect(read('docs/install-reference.md')).toContain('at level 40 (`warn`)');
  }, 90_000);

  it('a replica that does not know the ranges answers 503 without a log line per request', async () => {
    const unreachable = join(scratch, 'unreachable2.kubeconfig');
    writeFileSync(
      unreachable,
      'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "http://127.0.0.1:9"}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n',
    );
    certs = await writeCerts(folder('certs-503'));
    server = await startServe(
      [
        '--kubeconfig',
        unreachable,
        '--tls-cert-file',
        certs.certFile,
        '--tls-private-key-file',
        certs.keyFile,
      ],
      {
        KUBECONFIG: '',
        ROUTABILITY_WEBHOOK_SERVICE_CIDR: '',
      },
    );
    running.push(server);
    const before = server.logs.length;
    const answers = await Promise.all(
      [1, 2, 3].map(() =>
        httpsPost(server.port, '/validate', readFileSync(FIXTURE), { ca: certs.generated.caCert }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([503, 503, 503]);
    await sleep(300);
    const perRequest = server.logs.slice(before).filter((l) => /request|review/.test(String(l['msg'])));
    expect(perRequest).toEqual([]);
    expect(read('docs/operations.md')).toContain(
      '`503` is a replica that is not ready (not logged per request',
    );
  }, 90_000);
});

describe('operations.md: what missing RBAC does', () => {
  let fake: FakeApiServer | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  async function serveAgainst(f: FakeApiServer) {
    const certs = await writeCerts(folder('certs-rbac'));
    const server = await startServe(
      [
        '--kubeconfig',
        f.kubeconfigPath,
        '--tls-cert-file',
        certs.certFile,
        '--tls-private-key-file',
        certs.keyFile,
      ],
      { KUBECONFIG: '', ROUTABILITY_WEBHOOK_SERVICE_CIDR: '' },
    );
    running.push(server);
    return server;
  }

  it('IPAddress get forbidden: ready, allocated IPs "unavailable" with the reason; ServiceCIDR list forbidden: not ready', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    fake.failGets('ipaddresses', 1_000_000, 403);
    const s = await serveAgainst(fake);
    await eventually(
      async () => (await httpGet(s.healthPort, '/readyz')).status === 200,
      'ready without IPAddress access',
    );
    let detail = '';
    await eventually(async () => {
      detail = JSON.stringify(
        (JSON.parse((await httpGet(s.healthPort, '/readyz?verbose')).body) as { detail: unknown }).detail,
      );
      // A start-up on a loaded machine can miss the first probe's deadline; the next one gets the 403.
      return detail.includes('HTTP 403 (forbidden: needs get on ipaddresses)');
    }, 'the probe refused with 403');
    expect(detail).toContain('"state":"unavailable"');
    await fake.close();

    fake = await FakeApiServer.start();
    fake.failLists('servicecidrs', 1_000_000, 403);
    const t = await serveAgainst(fake);
    await sleep(1000);
    expect((await httpGet(t.healthPort, '/readyz')).status).toBe(503);

    const row = read('docs/operations.md')
      .split('\n')
      .find((l) => l.startsWith('| RBAC |'))!;
    expect(row).toContain('without `servicecidrs` access the server stays unready');
    expect(row).toContain('without `get` on `ipaddresses` it is ready');
    expect(row).toContain('`allocatedIPs.state: unavailable`');
  }, 60_000);
});

describe('chart README: when the chart creates RBAC and mounts a token', () => {
  it('with serviceCIDRs set, the allocated-IP check and the audit off and a fixed revision: no ClusterRole, no token; otherwise a ClusterRole', async () => {
    const none = await render({
      setJson: {
        'webhook.serviceCIDRs': ['10.96.0.0/12'],
        'webhook.checkAllocatedIPs': false,
        'webhook.audit.interval': '0',
        'webhook.gepRevision': 'provisional',
      },
    });
    expect(all(none, 'ClusterRole')).toEqual([]);
    expect(all(none, 'Role')).toEqual([]);
    expect(one(none, 'Deployment').spec.template.spec.automountServiceAccountToken).toBe(false);
    const defaults = await render();
    const resources = one(defaults, 'ClusterRole').rules.flatMap((r: { resources: string[] }) => r.resources);
    expect(resources.sort()).toEqual([
      'customresourcedefinitions',
      'gateways',
      'ipaddresses',
      'servicecidrs',
    ]);
    expect(one(defaults, 'Deployment').spec.template.spec.automountServiceAccountToken).toBe(true);
    expect(read('charts/gateway-routability-webhook/README.md')).toContain(
      'With `webhook.serviceCIDRs` set, `webhook.checkAllocatedIPs=false`,\n`webhook.audit.interval=0` (a number from `--set`, or the string `"0"`) and a fixed `webhook.gepRevision`\nthe server needs no API access',
    );
  }, 60_000);
});

describe('messages.md', () => {
  it('the ClusterAddressGloballyRoutable example really draws that warning', async () => {
    const { value } = CATALOGUE.ClusterAddressGloballyRoutable.example.params;
    const review = JSON.parse(readFileSync(FIXTURE, 'utf8'));
    review.request.object.spec.addresses = [{ type: 'IPAddress', value, routability: 'Cluster' }];
    // A range that is not global as a whole (10.0.0.0/7 holds private 10/8 and public 11/8).
    const r = await runCli(['review', '--service-cidr', '10.0.0.0/7'], {
      input: JSON.stringify(review),
    });
    expect(r.code, r.stderr).toBe(0);
    const { response } = JSON.parse(r.stdout);
    expect(response.allowed).toBe(true);
    expect(response.warnings).toContain(
      CATALOGUE.ClusterAddressGloballyRoutable.warning('spec.addresses[0].value', { value }),
    );
  });

  it('defaulted-routability is a count', async () => {
    const input = readFileSync(join(REPO, 'test', 'fixtures', 'reviews', 'status-defaulting.json'), 'utf8');
    const r = await runCli(['review', '--webhook', 'mutate', '--service-cidr', '10.96.0.0/12'], { input });
    const annotations = JSON.parse(r.stdout).response.auditAnnotations as Record<string, string>;
    expect(annotations['defaulted-routability']).toMatch(/^[1-9]\d*$/);
    expect(read('docs/messages.md')).toContain(
      '`defaulted-routability` (mutating webhook) is the number of status addresses',
    );
  });

  it('the table of non-rule errors has a row for every error the server answers', async () => {
    const { app } = testApp({ settings: {} });
    const ask = (
      payload: string,
      contentType = 'application/json',
      url = '/validate',
      method: 'POST' | 'GET' = 'POST',
    ) => app.inject({ method, url, headers: { 'content-type': contentType }, payload });
    const answers = [
      await ask(''),
      await ask('{nope'),
      await ask(`${'['.repeat(20_000)}${']'.repeat(20_000)}`),
      await ask('{}'),
      await ask('x', 'text/plain'),
      await ask(JSON.stringify({ pad: 'x'.repeat(8 * 1024 * 1024) })),
      await ask('', 'application/json', '/elsewhere', 'GET'),
    ];
    await app.close();
    const rows = read('docs/messages.md')
      .split('\n')
      .map((l) => /^\| HTTP (\d+) `\{"error": "(.*)"\}` \|/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({
        status: Number(m[1]),
        // `…` and `<placeholder>` stand for any text.
        pattern: new RegExp(
          `^${m[2]!
            .split(/…|<[^>]+>/)
            .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('.*')}$`,
        ),
      }));
    for (const a of answers) {
      const error = (a.json() as { error: string }).error;
      expect(
        rows.some((r) => r.status === a.statusCode && r.pattern.test(error)),
        `docs/messages.md has no row for HTTP ${a.statusCode} {"error": "${error}"}`,
      ).toBe(true);
    }
  }, 30_000);
});

describe('operations.md: the dashboard', () => {
  it('has no apiserver panels, as the page says', () => {
    const dashboard = read('charts/gateway-routability-webhook/files/dashboard.json');
    expect(dashboard).not.toContain('apiserver_');
    expect(read('docs/operations.md')).toContain('it has no apiserver panels');
  });
});
