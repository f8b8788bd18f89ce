/**
 * The report writer against the fake API server serving the report CRD:
 * reports created, updated when findings change, left alone when they do
 * not, removed when a namespace's Gateways become clean; others' reports
 * never touched; an absent CRD said once while the writer keeps trying.
 * Every write goes through the CRD schema, as the API server would judge it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { kubeClient } from '../../src/kube/client.js';
import { loadKubeconfig } from '../../src/kube/kubeconfig.js';
import { startReportWriter } from '../../src/audit/report-writer.js';
import { auditPass, type AuditResult } from '../../src/audit/pass.js';
import { judgeWithContext } from '../../src/audit/judge.js';
import { MANAGED_BY, MANAGED_BY_LABEL, REPORT_APIS, REPORT_NAME } from '../../src/audit/reports.js';
import { context as baseContext, ranges } from '../kit/gateways.js';
import { FakeApiServer, gateway } from '../kit/fake-apiserver.js';
import { FakeReports } from '../kit/fake-reports.js';
import { capturingLogger } from '../kit/helpers.js';
import { reportValidator, type ReportCrd } from './report-crds.js';
import { eventually } from '../kit/eventually.js';

const outside = { type: 'IPAddress', value: '192.168.7.7', routability: 'Cluster' };
const inside = { type: 'IPAddress', value: '10.96.0.20', routability: 'Cluster' };
const externalInside = { type: 'IPAddress', value: '10.96.0.30', routability: 'External' };

async function audit(objects: unknown[]): Promise<AuditResult> {
  const ctx = baseContext({ ranges: ranges('10.96.0.0/16'), statusPolicy: 'warn' });
  return auditPass(
    (async function* () {
      yield { items: objects, page: 1, restarted: false };
    })(),
    judgeWithContext(ctx),
  );
}

let fake: FakeApiServer | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setUp(mode: 'policyreport' | 'openreports', crd: ReportCrd) {
  fake = await FakeApiServer.start();
  const validate = reportValidator(crd);
  const store = FakeReports.attach(fake, REPORT_APIS[mode], validate);
  const { logger, lines } = capturingLogger();
  const { kc } = loadKubeconfig({ kubeconfig: fake.kubeconfigPath, env: {} });
  let clock = 1_800_000_000_000;
  const writer = startReportWriter({
    client: kubeClient(kc),
    api: REPORT_APIS[mode],
    logger,
    now: () => clock,
  });
  return { store, lines, writer, tick: (ms: number) => (clock += ms) };
}

describe.each([
  ['policyreport', 'policyreportKyverno'],
  ['openreports', 'openreports'],
] as const)('report writer (%s)', (mode, crd) => {
  it('creates, updates, keeps and garbage-collects one report per namespace', async () => {
    const { store, writer, tick, lines } = await setUp(mode, crd);
    // Someone else's report, in a namespace that will have ours too, and one of ours-by-name but not by label.
    store.put({
      metadata: { name: 'kyverno-report', namespace: 'apps', labels: { [MANAGED_BY_LABEL]: 'kyverno' } },
      results: [],
    });
    store.put({ metadata: { name: REPORT_NAME, namespace: 'other' }, results: [] });

    const first = await writer.write(
      await audit([
        gateway('apps', 'a', { spec: [outside] }),
        gateway('edge', 'b', { spec: [externalInside] }),
        gateway('other', 'c', { spec: [outside] }),
        gateway('clean', 'd', { spec: [inside] }),
      ]),
    );
    expect(first).toMatchObject({ state: 'written', created: 2, updated: 0, deleted: 0 });
    expect(store.get('apps', REPORT_NAME)?.['results']).toHaveLength(1);
    expect(store.get('edge', REPORT_NAME)?.['summary']).toMatchObject({ fail: 1 });
    expect(store.get('clean', REPORT_NAME)).toBeUndefined();
    // "other" holds a report of our name without our label: left alone, said so.
    expect(store.get('other', REPORT_NAME)?.metadata['labels']).toBeUndefined();
    expect(lines.filter((l) => l.msg.includes('without our label'))).toHaveLength(1);
    const createdAt = (store.get('apps', REPORT_NAME)!['results'] as { timestamp: { seconds: number } }[])[0]!
      .timestamp.seconds;

    // Nothing changed: no writes at all.
    tick(60_000);
    const writesBefore = store.writes.length;
    const same = await writer.write(
      await audit([
        gateway('apps', 'a', { spec: [outside] }),
        gateway('edge', 'b', { spec: [externalInside] }),
      ]),
    );
    expect(same).toMatchObject({ created: 0, updated: 0, deleted: 0, unchanged: 2 });
    expect(store.writes.length).toBe(writesBefore);

    // apps gains a finding, edge becomes clean.
    tick(60_000);
    const changed = await writer.write(
      await audit([
        gateway('apps', 'a', { spec: [outside] }),
        gateway('apps', 'e', { spec: [externalInside] }),
        gateway('edge', 'b', { spec: [inside] }),
      ]),
    );
    expect(changed).toMatchObject({ created: 0, updated: 1, deleted: 1 });
    const results = store.get('apps', REPORT_NAME)!['results'] as {
      resources: { name: string }[];
      timestamp: { seconds: number };
    }[];
    expect(results.map((r) => r.resources[0]!.name)).toEqual(['a', 'e']);
    expect(results[0]!.timestamp.seconds).toBe(createdAt); // first seen, kept
    expect(results[1]!.timestamp.seconds).toBe(createdAt + 120);
    expect(store.get('edge', REPORT_NAME)).toBeUndefined();
    expect(store.get('apps', 'kyverno-report')).toBeDefined();

    // Everything clean: our reports go, others' stay.
    const clean = await writer.write(await audit([gateway('apps', 'a', { spec: [inside] })]));
    expect(clean).toMatchObject({ deleted: 1 });
    expect([...store.objects.keys()].sort()).toEqual([`apps/kyverno-report`, `other/${REPORT_NAME}`]);
    expect(
      store.writes
        .filter((w) => w.method === 'DELETE')
        .map((w) => w.key)
        .sort(),
    ).toEqual([`apps/${REPORT_NAME}`, `edge/${REPORT_NAME}`]);
    expect(lines.filter((l) => l.msg === 'audit reports written')).toHaveLength(3);
  });

  it('reads its reports page by page: 25 namespaces, unchanged on the next pass, all removed when clean', async () => {
    const { store, writer } = await setUp(mode, crd);
    const namespaces = Array.from({ length: 25 }, (_, i) => `ns-${String(i).padStart(2, '0')}`);
    const failing = await audit(namespaces.map((ns) => gateway(ns, 'gw', { spec: [outside] })));
    expect(await writer.write(failing)).toMatchObject({ created: 25 });
    // Every stored report was found across the pages: nothing is created twice, nothing rewritten.
    expect(await writer.write(failing)).toMatchObject({ created: 0, updated: 0, unchanged: 25 });
    const clean = await audit(namespaces.map((ns) => gateway(ns, 'gw', { spec: [inside] })));
    expect(await writer.write(clean)).toMatchObject({ deleted: 25 });
    expect(store.objects.size).toBe(0);
  });

  it('says once that the report CRD is absent, keeps trying, and writes once it is installed', async () => {
    const { store, writer, lines } = await setUp(mode, crd);
    store.served = false;
    const result = await audit([gateway('apps', 'a', { spec: [outside] })]);
    for (let i = 0; i < 3; i++) expect(await writer.write(result)).toMatchObject({ state: 'absent' });
    const absent = lines.filter((l) => String(l.msg).includes('is not served'));
    expect(absent).toHaveLength(1);
    expect(absent[0]!.level).toBe(40);
    expect(writer.describe()).toMatchObject({ state: 'absent' });

    store.served = true;
    expect(await writer.write(result)).toMatchObject({ state: 'written', created: 1 });
    expect(lines.filter((l) => String(l.msg).includes('is served now'))).toHaveLength(1);
    expect(store.get('apps', REPORT_NAME)?.metadata['labels']).toEqual({ [MANAGED_BY_LABEL]: MANAGED_BY });
  });
});

describe('report writer failures', () => {
  it('a namespace whose write is refused does not stop the others; the error is logged once, retried next pass', async () => {
    fake = await FakeApiServer.start();
    let refuse = true;
    const store = FakeReports.attach(fake, REPORT_APIS.policyreport, (object) => ({
      errors:
        refuse && (object as { metadata: { namespace: string } }).metadata.namespace === 'bad'
          ? ['metadata.namespace: namespace bad is being terminated']
          : [],
      stored: object,
    }));
    const { logger, lines } = capturingLogger();
    const { kc } = loadKubeconfig({ kubeconfig: fake.kubeconfigPath, env: {} });
    const writer = startReportWriter({ client: kubeClient(kc), api: REPORT_APIS.policyreport, logger });
    const result = await audit([
      gateway('bad', 'a', { spec: [outside] }),
      gateway('good', 'b', { spec: [outside] }),
    ]);

    for (let i = 0; i < 2; i++) expect(await writer.write(result)).toMatchObject({ state: 'failed' });
    expect(store.get('good', REPORT_NAME)).toBeDefined();
    expect(store.get('bad', REPORT_NAME)).toBeUndefined();
    const failed = lines.filter((l) => l.msg === 'audit reports: writing failed; retried with backoff');
    expect(failed).toHaveLength(1);
    expect(String(failed[0]!['err'])).toContain('bad: HTTP 422');
    expect(writer.describe()).toMatchObject({ state: 'failed' });

    refuse = false;
    expect(await writer.write(result)).toMatchObject({ state: 'written', created: 1, unchanged: 1 });
    expect(store.get('bad', REPORT_NAME)).toBeDefined();
  });

  /** A writer over the fake with fast retries, refusing writes to namespace `bad` while `refuse.on`. */
  async function failing(opts: { leading?: () => boolean } = {}) {
    fake = await FakeApiServer.start();
    const refuse = { on: true };
    const store = FakeReports.attach(fake, REPORT_APIS.policyreport, (object) => ({
      errors:
        refuse.on && (object as { metadata: { namespace: string } }).metadata.namespace === 'bad'
          ? ['metadata.namespace: namespace bad is being terminated']
          : [],
      stored: object,
    }));
    const { logger, lines } = capturingLogger();
    const { kc } = loadKubeconfig({ kubeconfig: fake.kubeconfigPath, env: {} });
    const writer = startReportWriter({
      client: kubeClient(kc),
      api: REPORT_APIS.policyreport,
      logger,
      retry: { initialMs: 100, maxMs: 400 },
      ...opts,
    });
    return { fake, store, refuse, lines, writer };
  }

  const until = (probe: () => boolean, what: string) => eventually(probe, what, 10_000, 50);

  it('a round with a failed write deletes nothing; it is retried by itself and then deletes', async () => {
    const { store, refuse, writer } = await failing();
    // Last pass: reports in `bad`, `good` and `gone`. This pass: `gone` is clean.
    await writer.write(
      await audit([gateway('gone', 'c', { spec: [outside] }), gateway('good', 'b', { spec: [outside] })]),
    );
    expect(store.get('gone', REPORT_NAME)).toBeDefined();
    const result = await audit([
      gateway('bad', 'a', { spec: [outside] }),
      gateway('good', 'b', { spec: [outside] }),
    ]);
    expect(await writer.write(result)).toMatchObject({ state: 'failed', deleted: 0 });
    expect(store.get('gone', REPORT_NAME)).toBeDefined();
    expect(store.writes.filter((w) => w.method === 'DELETE')).toEqual([]);
    expect(writer.describe()).toMatchObject({ state: 'failed', nextRetryInMs: expect.any(Number) });
    // Retried without another pass: once the namespace takes writes, the round completes.
    refuse.on = false;
    await until(() => store.get('bad', REPORT_NAME) !== undefined, 'the retried create');
    await until(() => store.get('gone', REPORT_NAME) === undefined, 'the delete after a full round');
    // The store deletes when the DELETE arrives; the writer says `written` once it has read the
    // answer, a moment later (on a busy machine, after the line above has already seen the delete).
    await until(() => writer.describe().state === 'written', 'the round marked written');
    expect(writer.describe()).toMatchObject({ state: 'written' });
    expect(writer.describe()).not.toHaveProperty('nextRetryInMs');
    await writer.stop();
  });

  it('a refused DELETE fails the round: the report stays, the error is said, and the retry deletes it', async () => {
    const { fake: f, store, writer } = await failing();
    await writer.write(await audit([gateway('gone', 'c', { spec: [outside] })]));
    expect(store.get('gone', REPORT_NAME)).toBeDefined();
    // The namespace's Gateways are clean now: its report is deleted, and the first DELETE is refused.
    f.faults.add(
      { resource: 'policyreports', verbs: ['write'] },
      { kind: 'status', code: 403 },
      { count: 1 },
    );
    const clean = await audit([gateway('gone', 'c', { spec: [inside] })]);
    expect(await writer.write(clean)).toMatchObject({ state: 'failed', deleted: 0 });
    expect(store.get('gone', REPORT_NAME)).toBeDefined();
    expect(writer.describe()).toMatchObject({
      state: 'failed',
      lastError: expect.stringMatching(
        /^1 report writes failed \(nothing deleted; retried\): gone: HTTP 403/,
      ),
      nextRetryInMs: expect.any(Number),
    });
    await until(() => store.get('gone', REPORT_NAME) === undefined, 'the retried delete');
    await until(() => writer.describe().state === 'written', 'the round marked written');
    await writer.stop();
  });

  it('a report list that is not a list (a proxy page) writes and deletes nothing', async () => {
    const { fake: f, store, writer } = await failing();
    store.put({
      apiVersion: 'wgpolicyk8s.io/v1alpha2',
      kind: 'PolicyReport',
      metadata: { namespace: 'gone', name: REPORT_NAME, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    });
    f.faults.add(
      { resource: 'policyreports', verbs: ['list'] },
      { kind: 'lines', lines: ['{"kind":"Status"}'] },
    );
    const outcome = await writer.write(await audit([gateway('good', 'b', { spec: [outside] })]));
    expect(outcome).toMatchObject({ state: 'failed' });
    expect(writer.describe()).toMatchObject({ lastError: expect.stringContaining('no items array') });
    expect(f.count({ resource: 'policyreports', verb: 'write' })).toBe(0);
    expect(store.get('gone', REPORT_NAME)).toBeDefined();
    await writer.stop();
  });

  it('429 with Retry-After on a write: no further request that round, the retry waits the Retry-After', async () => {
    const { fake: f, store, writer } = await failing();
    f.faults.add(
      { resource: 'policyreports', verbs: ['write'] },
      { kind: 'status', code: 429, retryAfterSeconds: 1 },
      { count: 1 },
    );
    const result = await audit(['x', 'y', 'z'].map((ns) => gateway(ns, 'gw', { spec: [outside] })));
    expect(await writer.write(result)).toMatchObject({ state: 'failed' });
    expect(f.count({ resource: 'policyreports', verb: 'write' })).toBe(1);
    await until(() => store.objects.size === 3, 'the three reports after the retry');
    const writes = f.requests.filter((r) => r.resource === 'policyreports' && r.verb === 'write');
    // Backoff alone would retry after 80-120 ms; the server asked for 1 s.
    expect(writes[1]!.at - writes[0]!.at).toBeGreaterThanOrEqual(950);
    await writer.stop();
  });

  it('sends nothing while another replica leads, and schedules no retry', async () => {
    const { fake: f, writer } = await failing({ leading: () => false });
    const outcome = await writer.write(await audit([gateway('good', 'b', { spec: [outside] })]));
    expect(outcome).toMatchObject({ state: 'failed' });
    expect(f.count({ resource: 'policyreports' })).toBe(0);
    expect(writer.describe()).not.toHaveProperty('nextRetryInMs');
  });
});
