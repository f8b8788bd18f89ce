/**
 * One watch stream (src/kube/watch-stream.ts) on a scripted kube client, in
 * process: what each watch request asks (timeoutSeconds from the jitter,
 * bookmarks, the informer's resourceVersion and fieldSelector), the start
 * deadline and name it passes on, what the informer is told when a stream
 * ends (an ERROR event, a 410 once and again, a watch ended at once without
 * an event), stop() while a watch is open and before one is asked, and the
 * cut-off of a watch the server leaves silent past its timeout and 15 s grace
 * (on fake timers: watch-grace.test.ts waits it out over HTTP in 16 s).
 */
import { PassThrough } from 'node:stream';
import type http from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KubeClient, KubeStreamRequest } from '../../src/kube/client.js';
import { KubeApiError } from '../../src/kube/errors.js';
import type { KubernetesListObject, KubernetesObject } from '../../src/kube/informer.js';
import { makeStoppableInformer } from '../../src/kube/watch-stream.js';

interface Opened {
  readonly request: KubeStreamRequest;
  readonly body: PassThrough;
}

/** A client whose stream() answers with a body the test writes to and ends. */
function scriptedClient(): { client: KubeClient; opened: Opened[] } {
  const opened: Opened[] = [];
  const client = {
    stream: (request: KubeStreamRequest) => {
      const body = new PassThrough();
      opened.push({ request, body });
      return Promise.resolve(body as unknown as http.IncomingMessage);
    },
  } as unknown as KubeClient;
  return { client, opened };
}

const PATH = '/apis/networking.k8s.io/v1/servicecidrs';
const obj = (name: string, rv: string) => ({ metadata: { name, resourceVersion: rv } });
const line = (type: string, object: unknown) => `${JSON.stringify({ type, object })}\n`;
const settle = async (times = 3) => {
  for (let i = 0; i < times; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

function start(opts: { random?: number; fieldSelector?: string; lists?: number } = {}) {
  const { client, opened } = scriptedClient();
  let lists = 0;
  const list = (): Promise<KubernetesListObject<KubernetesObject>> => {
    lists++;
    return Promise.resolve({ metadata: { resourceVersion: String(10 * lists) }, items: [] });
  };
  const made = makeStoppableInformer(client, PATH, list, {
    fieldSelector: opts.fieldSelector,
    watchTimeoutMs: 60_000,
    startTimeoutMs: 7_000,
    random: () => opts.random ?? 0.5,
  });
  const errors: unknown[] = [];
  made.informer.on('error', (err) => errors.push(err));
  return { ...made, opened, errors, lists: () => lists };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('a watch stream', () => {
  it.each([
    [0, '60'],
    [0.5, '90'],
    [0.999, '120'],
  ])(
    'random %s: asks the server to end it after %s s, with bookmarks, from the list resourceVersion',
    async (random, seconds) => {
      const s = start({ random, fieldSelector: 'metadata.name=x' });
      await s.informer.start();
      expect(s.opened).toHaveLength(1);
      const { request } = s.opened[0]!;
      expect(request.path).toBe(PATH);
      expect(request.query).toEqual({
        watch: 'true',
        timeoutSeconds: seconds,
        allowWatchBookmarks: 'true',
        resourceVersion: '10',
        fieldSelector: 'metadata.name=x',
      });
      expect(request.startTimeoutMs).toBe(7_000);
      expect(request.what).toBe(`watch ${PATH}`);
      expect(request.signal.aborted).toBe(false);
      s.stop();
    },
  );

  it('sends no fieldSelector when there is none', async () => {
    const s = start();
    await s.informer.start();
    expect(Object.keys(s.opened[0]!.request.query ?? {})).not.toContain('fieldSelector');
    s.stop();
  });

  it('an ERROR event other than 410 ends it with that code, or 500 when it has none', async () => {
    for (const [code, status] of [
      [503, 503],
      ['x', 500],
    ] as const) {
      const s = start();
      await s.informer.start();
      s.opened[0]!.body.write(line('ERROR', { kind: 'Status', code, message: 'm' }));
      await settle();
      expect(s.errors).toHaveLength(1);
      const err = s.errors[0] as KubeApiError;
      expect(err).toBeInstanceOf(KubeApiError);
      expect(err.statusCode).toBe(status);
      expect(err.message).toBe(`watch ${PATH}: ERROR event: HTTP ${status}`);
      expect(JSON.parse(err.body)).toEqual({ kind: 'Status', code, message: 'm' });
      expect(s.opened[0]!.request.signal.aborted).toBe(true);
      s.stop();
    }
  });

  it('a 410 relists at once; a second within 10 s is an error', async () => {
    const s = start();
    await s.informer.start();
    s.opened[0]!.body.write(line('ADDED', obj('a', '11')));
    // The 410 is passed on; the stream ends when the server ends it.
    s.opened[0]!.body.write(line('ERROR', { kind: 'Status', code: 410 }));
    await settle();
    expect(s.opened[0]!.request.signal.aborted).toBe(false);
    expect(s.lists()).toBe(1);
    s.opened[0]!.body.end();
    await settle();
    expect(s.errors).toEqual([]);
    expect(s.lists()).toBe(2);
    expect(s.opened).toHaveLength(2);
    expect(s.opened[1]!.request.query?.['resourceVersion']).toBe('20');
    s.opened[1]!.body.write(line('ADDED', obj('b', '21')));
    s.opened[1]!.body.end(line('ERROR', { kind: 'Status', code: 410 }));
    await settle();
    expect(s.errors.map(String)).toEqual([`Error: watch ${PATH}: 410 Gone again within 10 s of a relist`]);
    s.stop();
  });

  it('a 410 10 s after the last is a relist again, not an error', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const s = start();
    await s.informer.start();
    s.opened[0]!.body.write(line('ADDED', obj('a', '11')));
    s.opened[0]!.body.end(line('ERROR', { kind: 'Status', code: 410 }));
    await settle();
    vi.setSystemTime(Date.now() + 10_000);
    s.opened[1]!.body.write(line('ADDED', obj('b', '21')));
    s.opened[1]!.body.end(line('ERROR', { kind: 'Status', code: 410 }));
    await settle();
    expect(s.errors).toEqual([]);
    expect(s.lists()).toBe(3);
    s.stop();
  });

  it('a watch that ends within a second without an event is an error; with one, or later, it is watched again', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const s = start();
    await s.informer.start();
    // An event, then the end at once: watched again from its resourceVersion.
    s.opened[0]!.body.end(line('ADDED', obj('a', '11')));
    await settle();
    expect(s.errors).toEqual([]);
    expect(s.opened).toHaveLength(2);
    expect(s.opened[1]!.request.query?.['resourceVersion']).toBe('11');
    // No event, but a whole second: watched again.
    vi.setSystemTime(Date.now() + 1_000);
    s.opened[1]!.body.end();
    await settle();
    expect(s.errors).toEqual([]);
    expect(s.opened).toHaveLength(3);
    // No event, at once: an error.
    s.opened[2]!.body.end();
    await settle();
    expect(s.errors.map(String)).toEqual([`Error: watch ${PATH}: ended within 1 s with no event`]);
    expect(s.opened).toHaveLength(3);
    s.stop();
  });

  it('a bookmark counts as an event', async () => {
    const s = start();
    await s.informer.start();
    s.opened[0]!.body.end(line('BOOKMARK', { metadata: { resourceVersion: '15' } }));
    await settle();
    expect(s.errors).toEqual([]);
    expect(s.opened[1]!.request.query?.['resourceVersion']).toBe('15');
    s.stop();
  });

  it('stop() aborts the open watch, says it stopped, and opens no other', async () => {
    const s = start();
    await s.informer.start();
    const { request } = s.opened[0]!;
    s.stop();
    expect(request.signal.aborted).toBe(true);
    await settle();
    expect(s.errors.map(String)).toEqual([`Error: watch ${PATH}: stopped`]);
    expect(s.opened).toHaveLength(1);
  });

  it('stop() while a watch is still being opened aborts it', async () => {
    const requests: KubeStreamRequest[] = [];
    const client = {
      stream: (request: KubeStreamRequest) => {
        requests.push(request);
        return new Promise<never>(() => {});
      },
    } as unknown as KubeClient;
    const made = makeStoppableInformer(
      client,
      PATH,
      () => Promise.resolve({ metadata: { resourceVersion: '1' }, items: [] }),
      { fieldSelector: undefined, watchTimeoutMs: 60_000, startTimeoutMs: 7_000, random: () => 0 },
    );
    void made.informer.start();
    await settle();
    expect(requests).toHaveLength(1);
    made.stop();
    expect(requests[0]!.signal.aborted).toBe(true);
  });

  it('a watch asked for after stop() is aborted before any request', async () => {
    const s = start();
    s.stop();
    await s.informer.start();
    expect(s.opened).toHaveLength(0);
    expect(s.lists()).toBe(1);
  });

  it('a watch left silent is cut off 15 s after its timeout, not before', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const s = start({ random: 0 });
    await s.informer.start();
    const { request } = s.opened[0]!;
    await vi.advanceTimersByTimeAsync(60_000 + 15_000 - 1);
    expect(s.errors).toEqual([]);
    expect(request.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(s.errors.map(String)).toEqual([
      `Error: watch ${PATH}: not ended 15 s after its 60 s timeout; replaced`,
    ]);
    expect(request.signal.aborted).toBe(true);
    s.stop();
  });

  it('a watch that ends cleans its deadline up: no cut-off later', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const s = start({ random: 0 });
    await s.informer.start();
    s.opened[0]!.body.end(line('ADDED', obj('a', '11')));
    await vi.advanceTimersByTimeAsync(0);
    expect(s.opened).toHaveLength(2);
    // The ended watch's deadline is gone: one timer, the open watch's.
    expect(vi.getTimerCount()).toBe(1);
    s.opened[1]!.body.write(line('ADDED', obj('b', '12')));
    await vi.advanceTimersByTimeAsync(60_000 + 15_000 - 1);
    expect(s.errors).toEqual([]);
    s.stop();
  });
});
