/**
 * The report writer's requests and retries against a scripted client: what
 * it asks for, in which order, and when it tries again. Each request is
 * answered by the test (a list page, a write's answer or a KubeApiError),
 * and time is vitest's, so the backoff is read exactly.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { KubeClient, KubeRequest } from '../../src/kube/client.js';
import { KubeApiError } from '../../src/kube/errors.js';
import {
  NOT_LEADING_WRITES,
  startReportWriter,
  type ReportWriterOptions,
} from '../../src/audit/report-writer.js';
import { OMITTED_ANNOTATION, REPORT_APIS, REPORT_NAME, desiredReports } from '../../src/audit/reports.js';
import { capturingLogger } from '../kit/helpers.js';
import { finding, passOf } from './results.js';

const LIST = '/apis/wgpolicyk8s.io/v1alpha2/policyreports';
const at = (ns: string) => `/apis/wgpolicyk8s.io/v1alpha2/namespaces/${ns}/policyreports`;
const SELECTOR = 'app.kubernetes.io/managed-by=gateway-routability-webhook';

/** A result with one violation in each namespace named. */
const failingIn = (...namespaces: string[]) =>
  passOf(namespaces.map((namespace) => ({ namespace, name: 'gw', findings: [finding()] })));

/** A stored report of ours, as listed: the desired one for `result` when given, else an empty one. */
function stored(namespace: string, resourceVersion: string, result = passOf([])): unknown {
  const desired = desiredReports(result, REPORT_APIS.policyreport, { nowSeconds: 1 }).get(namespace);
  return {
    ...desired,
    metadata: { name: REPORT_NAME, namespace, resourceVersion },
  };
}

const apiError = (statusCode: number, retryAfter?: string) =>
  new KubeApiError({ statusCode, body: '', what: 'request', retryAfter });

/** A writer over a client whose answers come from `answer`; every request is kept in `sent`. */
function scripted(answer: (req: KubeRequest) => unknown, opts: Partial<ReportWriterOptions> = {}) {
  const sent: KubeRequest[] = [];
  const client = {
    json: (req: KubeRequest) => {
      sent.push(req);
      return Promise.resolve().then(() => answer(req));
    },
  } as unknown as KubeClient;
  const { logger, lines } = capturingLogger();
  const writer = startReportWriter({
    client,
    api: REPORT_APIS.policyreport,
    logger,
    now: () => 1_000_000,
    ...opts,
  });
  return { writer, sent, lines };
}

/** A list of the given stored reports on one page, and every write accepted. */
const listing =
  (items: unknown[]) =>
  (req: KubeRequest): unknown =>
    req.method === 'GET' ? { items, metadata: {} } : {};

describe('report writer requests', () => {
  it('lists its reports by label, 10 a page with 16 MiB each, following continue tokens to an empty one', async () => {
    const pages: Record<string, unknown> = {
      '': { items: [], metadata: { continue: 't1' } },
      t1: { items: [], metadata: { continue: 't2' } },
      t2: { items: [], metadata: { continue: '' } },
    };
    const { writer, sent } = scripted((req) => pages[req.query?.['continue'] ?? '']);
    expect(await writer.write(passOf([]))).toEqual({
      state: 'written',
      created: 0,
      updated: 0,
      deleted: 0,
      unchanged: 0,
    });
    const list = { method: 'GET', path: LIST, timeoutMs: 10_000, maxBodyBytes: 16 * 1024 * 1024 };
    expect(sent).toEqual([
      { ...list, query: { labelSelector: SELECTOR, limit: '10' } },
      { ...list, query: { labelSelector: SELECTOR, limit: '10', continue: 't1' } },
      { ...list, query: { labelSelector: SELECTOR, limit: '10', continue: 't2' } },
    ]);
  });

  it('takes as its own only listed objects named gateway-routability-audit with a namespace', async () => {
    const { writer, sent } = scripted(
      listing([
        stored('gone', '7'),
        { metadata: { namespace: 'x', name: 'someone-else' } },
        { metadata: { name: REPORT_NAME } },
        { metadata: { namespace: 5, name: REPORT_NAME } },
        'not an object',
        null,
      ]),
      { timeoutMs: 2_500 },
    );
    expect(await writer.write(passOf([]))).toMatchObject({ state: 'written', deleted: 1 });
    expect(sent.slice(1)).toEqual([
      { method: 'DELETE', path: `${at('gone')}/${REPORT_NAME}`, timeoutMs: 2_500 },
    ]);
  });

  it('creates with POST, updates with PUT under the stored resourceVersion, leaves an equal report alone, and says what it wrote', async () => {
    const result = failingIn('new', 'changed', 'same');
    const desired = desiredReports(result, REPORT_APIS.policyreport, { nowSeconds: 1_000 });
    const { writer, sent, lines } = scripted(listing([stored('changed', '42'), stored('same', '9', result)]));
    expect(writer.describe()).toEqual({ api: 'policyreports.wgpolicyk8s.io/v1alpha2', state: 'pending' });
    expect(await writer.write(result)).toEqual({
      state: 'written',
      created: 1,
      updated: 1,
      deleted: 0,
      unchanged: 1,
    });
    expect(sent.slice(1)).toEqual([
      { method: 'POST', path: at('new'), timeoutMs: 10_000, body: desired.get('new') },
      {
        method: 'PUT',
        path: `${at('changed')}/${REPORT_NAME}`,
        timeoutMs: 10_000,
        body: {
          ...desired.get('changed'),
          metadata: { ...desired.get('changed')!.metadata, resourceVersion: '42' },
        },
      },
    ]);
    const written = lines.filter((l) => l.msg === 'audit reports written');
    expect(written).toMatchObject([
      {
        level: 30,
        api: 'policyreports.wgpolicyk8s.io/v1alpha2',
        created: 1,
        updated: 1,
        deleted: 0,
        unchanged: 1,
      },
    ]);
  });

  it('a stored report that said results were omitted is updated when none are', async () => {
    const result = failingIn('apps');
    const trimmed = stored('apps', '3', result) as { metadata: Record<string, unknown> };
    trimmed.metadata['annotations'] = { [OMITTED_ANNOTATION]: '5' };
    const { writer, sent } = scripted(listing([trimmed]));
    expect(await writer.write(result)).toMatchObject({ updated: 1, unchanged: 0 });
    expect(sent.map((r) => r.method)).toEqual(['GET', 'PUT']);
  });

  it('says once that the API is not served (404 on the list), and once that it is served again', async () => {
    let served = false;
    const { writer, lines } = scripted((req) => {
      if (!served) throw apiError(404);
      return listing([])(req);
    });
    expect(await writer.write(passOf([]))).toMatchObject({ state: 'absent' });
    expect(await writer.write(passOf([]))).toMatchObject({ state: 'absent' });
    served = true;
    expect(await writer.write(passOf([]))).toMatchObject({ state: 'written' });
    const api = 'policyreports.wgpolicyk8s.io/v1alpha2';
    expect(lines).toMatchObject([
      { level: 40, api, msg: expect.stringContaining(`${api} is not served`) },
      { level: 30, api, msg: `audit reports: ${api} is served now; writing reports` },
    ]);
    expect(lines).toHaveLength(2);
  });

  it('a round that changes nothing says nothing', async () => {
    const result = failingIn('same');
    const { writer, lines } = scripted(listing([stored('same', '9', result)]));
    expect(await writer.write(result)).toMatchObject({ state: 'written', unchanged: 1 });
    expect(lines).toEqual([]);
  });

  it('a 409 on create is a report of someone else, left alone; a 404 on delete was already gone; both complete the round', async () => {
    const { writer, lines } = scripted((req) => {
      if (req.method === 'GET') return { items: [stored('gone', '1')], metadata: {} };
      throw apiError(req.method === 'POST' ? 409 : 404);
    });
    expect(await writer.write(failingIn('taken'))).toEqual({
      state: 'written',
      created: 0,
      updated: 0,
      deleted: 0,
      unchanged: 0,
    });
    expect(lines).toMatchObject([
      {
        level: 40,
        msg: 'audit reports: a report of that name exists without our label; left alone',
        report: `taken/${REPORT_NAME}`,
      },
    ]);
  });

  it('a refused create or delete fails the round, naming the first three namespaces and how many failed', async () => {
    const { writer } = scripted((req) => {
      if (req.method === 'GET') return { items: [stored('stale', '1')], metadata: {} };
      throw apiError(req.method === 'POST' ? 422 : 500);
    });
    expect(await writer.write(failingIn('a', 'b', 'c', 'd'))).toMatchObject({ state: 'failed', created: 0 });
    expect(writer.describe()['lastError']).toBe(
      '4 report writes failed (nothing deleted; retried): a: HTTP 422; b: HTTP 422; c: HTTP 422',
    );
    const del = scripted((req) => {
      if (req.method === 'GET') return { items: [stored('stale', '1')], metadata: {} };
      throw apiError(500);
    });
    expect(await del.writer.write(passOf([]))).toMatchObject({ state: 'failed' });
    expect(del.writer.describe()['lastError']).toMatch(
      /^1 report writes failed \(nothing deleted; retried\): stale: HTTP 500/,
    );
  });

  it('says a failure by its message unless it is an HTTP answer, once per distinct error', async () => {
    let failure: unknown = new Error('socket hang up');
    const { writer, lines } = scripted(() => {
      throw failure;
    });
    const failedLines = () =>
      lines.filter((l) => l.msg === 'audit reports: writing failed; retried with backoff');
    await writer.write(passOf([]));
    await writer.write(passOf([]));
    expect(failedLines().map((l) => l['err'])).toEqual(['socket hang up']);
    failure = apiError(403);
    await writer.write(passOf([]));
    expect(failedLines().map((l) => l['err'])).toEqual([
      'socket hang up',
      'HTTP 403 (forbidden: the service account lacks permission)',
    ]);
    expect(writer.describe()).toMatchObject({
      api: 'policyreports.wgpolicyk8s.io/v1alpha2',
      state: 'failed',
      lastError: 'HTTP 403 (forbidden: the service account lacks permission)',
    });
    await writer.stop();
  });
});

describe('report writer retries', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  /** Lets a retry that came due run its round. */
  const settle = () => vi.advanceTimersByTimeAsync(0);

  it('backs off from initialMs, doubling to maxMs, and starts again after a round goes through', async () => {
    let fail = true;
    const { writer, sent } = scripted(
      () => {
        if (fail) throw new Error('down');
        return { items: [], metadata: {} };
      },
      { retry: { initialMs: 1_000, maxMs: 4_000 } },
    );
    await writer.write(passOf([]));
    const delays: unknown[] = [writer.describe()['nextRetryInMs']];
    for (let i = 0; i < 3; i++) {
      const before = sent.length;
      await vi.advanceTimersByTimeAsync(Number(delays.at(-1)) - 1);
      expect(sent.length).toBe(before);
      await vi.advanceTimersByTimeAsync(1);
      expect(sent.length).toBe(before + 1);
      delays.push(writer.describe()['nextRetryInMs']);
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 4_000]);
    fail = false;
    await vi.advanceTimersByTimeAsync(4_000);
    expect(writer.describe()).toEqual({ api: 'policyreports.wgpolicyk8s.io/v1alpha2', state: 'written' });
    fail = true;
    await writer.write(passOf([]));
    expect(writer.describe()['nextRetryInMs']).toBe(1_000);
    await writer.stop();
  });

  it('jitters the backoff by ±20 %, and counts down to the retry', async () => {
    const delayAt = async (random: number) => {
      vi.spyOn(Math, 'random').mockReturnValue(random);
      const { writer } = scripted(
        () => {
          throw new Error('down');
        },
        { retry: { initialMs: 1_000, maxMs: 4_000 } },
      );
      await writer.write(passOf([]));
      const first = writer.describe()['nextRetryInMs'];
      await vi.advanceTimersByTimeAsync(300);
      const later = writer.describe()['nextRetryInMs'];
      await writer.stop();
      return [first, later];
    };
    expect(await delayAt(0)).toEqual([800, 500]);
    expect(await delayAt(0.999)).toEqual([1_200, 900]);
  });

  it('defaults to 5 s doubling to 5 min', async () => {
    const { writer } = scripted(() => {
      throw new Error('down');
    });
    await writer.write(passOf([]));
    const delays = [writer.describe()['nextRetryInMs']];
    for (let i = 0; i < 8; i++) {
      await vi.advanceTimersByTimeAsync(Number(delays.at(-1)));
      delays.push(writer.describe()['nextRetryInMs']);
    }
    expect(delays).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
    await writer.stop();
  });

  it('waits at least the longest Retry-After of the round, at most 5 min, and sends nothing more that round', async () => {
    for (const [retryAfter, delay] of [
      ['30', 30_000],
      ['600', 300_000],
    ] as const) {
      const { writer, sent } = scripted(
        (req) => {
          if (req.method === 'GET') return { items: [], metadata: {} };
          throw apiError(429, retryAfter);
        },
        { retry: { initialMs: 1_000, maxMs: 4_000 } },
      );
      expect(await writer.write(failingIn('a', 'b'))).toMatchObject({ state: 'failed' });
      expect(sent.map((r) => r.method)).toEqual(['GET', 'POST']);
      expect(writer.describe()['nextRetryInMs']).toBe(delay);
      await writer.stop();
    }
  });

  it('a later round without a Retry-After backs off on its own again', async () => {
    let retryAfter: string | undefined = '30';
    const { writer } = scripted(
      () => {
        throw apiError(503, retryAfter);
      },
      { retry: { initialMs: 1_000, maxMs: 4_000 } },
    );
    await writer.write(passOf([]));
    expect(writer.describe()['nextRetryInMs']).toBe(30_000);
    retryAfter = undefined;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(writer.describe()['nextRetryInMs']).toBe(2_000);
    await writer.stop();
  });

  it('a new pass replaces a pending retry; the retry writes the latest result', async () => {
    let fail = true;
    const { writer, sent } = scripted(
      (req) => {
        if (fail) throw new Error('down');
        return req.method === 'GET' ? { items: [], metadata: {} } : {};
      },
      { retry: { initialMs: 1_000, maxMs: 4_000 } },
    );
    await writer.write(failingIn('first'));
    await vi.advanceTimersByTimeAsync(500);
    await writer.write(failingIn('second'));
    expect(writer.describe()['nextRetryInMs']).toBe(2_000);
    fail = false;
    const before = sent.length;
    await vi.advanceTimersByTimeAsync(1_500);
    expect(sent.length).toBe(before);
    await vi.advanceTimersByTimeAsync(500);
    expect(sent.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET ${LIST}`,
      `POST ${at('second')}`,
    ]);
    // A pass that goes through while a retry is pending leaves none to count down to.
    fail = true;
    await writer.write(failingIn('third'));
    fail = false;
    await writer.write(failingIn('third'));
    expect(writer.describe()).toEqual({ api: 'policyreports.wgpolicyk8s.io/v1alpha2', state: 'written' });
    await writer.stop();
  });

  it('a retry that comes due after the lease was lost does nothing', async () => {
    let leading = true;
    const { writer, sent, lines } = scripted(
      () => {
        throw new Error('down');
      },
      { leading: () => leading, retry: { initialMs: 1_000, maxMs: 4_000 } },
    );
    await writer.write(passOf([]));
    leading = false;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sent).toHaveLength(1);
    expect(writer.describe()['lastError']).toBe('down');
    expect(lines).toHaveLength(1);
  });

  it('after stop: no retry, and a write sends nothing', async () => {
    const { writer, sent } = scripted(
      () => {
        throw new Error('down');
      },
      { retry: { initialMs: 1_000, maxMs: 4_000 } },
    );
    await writer.write(passOf([]));
    await writer.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent).toHaveLength(1);
    expect(await writer.write(passOf([]))).toMatchObject({ state: 'failed' });
    expect(sent).toHaveLength(1);
    expect(writer.describe()).not.toHaveProperty('nextRetryInMs');
  });

  it('a lease lost during a round: no further request, no retry, said as such', async () => {
    let leading = true;
    const { writer, sent } = scripted(
      (req) => {
        if (req.method === 'GET') return { items: [], metadata: {} };
        leading = false;
        throw apiError(500);
      },
      { leading: () => leading, retry: { initialMs: 1_000, maxMs: 4_000 } },
    );
    expect(await writer.write(failingIn('a', 'b', 'c'))).toMatchObject({ state: 'failed' });
    expect(sent.map((r) => r.method)).toEqual(['GET', 'POST']);
    expect(writer.describe()).toEqual({
      api: 'policyreports.wgpolicyk8s.io/v1alpha2',
      state: 'failed',
      lastError: NOT_LEADING_WRITES,
    });
    leading = true;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent).toHaveLength(2);
    await settle();
  });
});
