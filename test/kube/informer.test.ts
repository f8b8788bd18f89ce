/**
 * The list-then-watch cache (src/kube/informer.ts) driven in process by a
 * scripted Watcher and list: which events it emits for a list, a relist and
 * each watch event, which resourceVersion and fieldSelector each watch asks
 * from, and what a 410, another error, a failed list and stop() do. The watch
 * tests reach it only over HTTP and see the objects, not the events.
 */
import { describe, expect, it } from 'vitest';
import {
  Informer,
  type InformerEvent,
  type KubernetesListObject,
  type KubernetesObject,
  type Watcher,
} from '../../src/kube/informer.js';

interface Call {
  path: string;
  query: Record<string, string | undefined>;
  send: (phase: string, obj: unknown) => void;
  end: (err: unknown) => void;
  controller: AbortController;
}

/** A Watcher that records each watch it is asked for; the test sends its events and ends it. */
class ScriptedWatch implements Watcher {
  readonly calls: Call[] = [];
  watch(
    path: string,
    query: Record<string, string | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const controller = new AbortController();
    this.calls.push({ path, query, send: callback, end: done, controller });
    return Promise.resolve(controller);
  }
  last(): Call {
    const call = this.calls.at(-1);
    if (call === undefined) throw new Error('no watch yet');
    return call;
  }
}

const obj = (name: string, rv: string | undefined, namespace?: string): KubernetesObject => ({
  metadata: {
    name,
    ...(namespace === undefined ? {} : { namespace }),
    ...(rv === undefined ? {} : { resourceVersion: rv }),
  },
});
const gone = { statusCode: 410 };
/** Lets the informer's awaited list and watch calls run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(
  lists: Array<KubernetesListObject<KubernetesObject> | Error>,
  fieldSelector?: string,
): {
  informer: Informer<KubernetesObject>;
  watch: ScriptedWatch;
  events: Array<[InformerEvent, unknown]>;
  listed: () => number;
} {
  const watch = new ScriptedWatch();
  let n = 0;
  const list = () => {
    const next = lists[Math.min(n++, lists.length - 1)]!;
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  };
  const informer = new Informer<KubernetesObject>({ path: '/apis/x/v1/things', watch, list, fieldSelector });
  const events: Array<[InformerEvent, unknown]> = [];
  for (const e of ['add', 'update', 'delete', 'error'] as const)
    informer.on(e, (arg) => events.push([e, arg]));
  return { informer, watch, events, listed: () => n };
}

const names = (informer: Informer<KubernetesObject>) => informer.list().map((o) => o.metadata?.name);

describe('the informer', () => {
  it('lists, adds each object, then watches from the list resourceVersion', async () => {
    const a = obj('a', '1');
    const b = obj('b', '2', 'ns');
    const { informer, watch, events } = setup([{ metadata: { resourceVersion: '7' }, items: [a, b] }]);
    await informer.start();
    expect(events).toEqual([
      ['add', a],
      ['add', b],
    ]);
    expect(watch.calls).toHaveLength(1);
    expect(watch.last().path).toBe('/apis/x/v1/things');
    expect(watch.last().query).toEqual({ resourceVersion: '7' });
    expect(informer.get('a')).toBe(a);
    expect(informer.get('b', 'ns')).toBe(b);
    expect(informer.get('b')).toBeUndefined();
    expect(informer.get('a', 'ns')).toBeUndefined();
    expect(names(informer)).toEqual(['a', 'b']);
  });

  it('asks each watch for its fieldSelector, and none when there is none', async () => {
    const { informer, watch } = setup([{ metadata: { resourceVersion: '1' }, items: [] }], 'metadata.name=x');
    await informer.start();
    expect(watch.last().query).toEqual({ resourceVersion: '1', fieldSelector: 'metadata.name=x' });
    const plain = setup([{ metadata: { resourceVersion: '1' }, items: [] }]);
    await plain.informer.start();
    expect(Object.keys(plain.watch.last().query)).toEqual(['resourceVersion']);
  });

  it('a list without a resourceVersion watches from "" (any)', async () => {
    const { informer, watch } = setup([{ items: [obj('a', '1')] }]);
    await informer.start();
    expect(watch.last().query['resourceVersion']).toBe('');
  });

  it('applies watch events: add, update only on a new resourceVersion, delete (as the event has it), bookmark', async () => {
    const { informer, watch, events } = setup([{ metadata: { resourceVersion: '1' }, items: [] }]);
    await informer.start();
    const w = watch.last();
    const a1 = obj('a', '2');
    w.send('ADDED', a1);
    const same = obj('a', '2');
    w.send('MODIFIED', same);
    const a3 = obj('a', '3');
    w.send('MODIFIED', a3);
    const b = obj('b', '4', 'ns');
    w.send('ADDED', b);
    w.send('DELETED', obj('missing', '5'));
    const bGone = obj('b', '6', 'ns');
    w.send('DELETED', bGone);
    w.send('BOOKMARK', { metadata: { resourceVersion: '9' } });
    expect(events).toEqual([
      ['add', a1],
      ['update', a3],
      ['add', b],
      ['delete', bGone],
    ]);
    expect(informer.get('a')).toBe(a3);
    expect(informer.list()).toEqual([a3]);
    // A clean end watches again from the last resourceVersion seen (the bookmark's), without a list.
    w.end(null);
    await settle();
    expect(watch.calls).toHaveLength(2);
    expect(watch.last().query['resourceVersion']).toBe('9');
    expect(w.controller.signal.aborted).toBe(true);
  });

  it('an object without a resourceVersion is always an update', async () => {
    const { informer, watch, events } = setup([{ metadata: { resourceVersion: '1' }, items: [] }]);
    await informer.start();
    const first = obj('a', undefined);
    const second = obj('a', undefined);
    watch.last().send('ADDED', first);
    watch.last().send('MODIFIED', second);
    expect(events.map(([e]) => e)).toEqual(['add', 'update']);
    expect(informer.get('a')).toBe(second);
  });

  it('keeps objects by namespace and name: the same name in two namespaces is two objects', async () => {
    const { informer, watch, events } = setup([{ metadata: { resourceVersion: '1' }, items: [] }]);
    await informer.start();
    watch.last().send('ADDED', obj('a', '2', 'one'));
    watch.last().send('ADDED', obj('a', '3', 'two'));
    watch.last().send('DELETED', obj('a', '4', 'one'));
    expect(events.map(([e]) => e)).toEqual(['add', 'add', 'delete']);
    expect(informer.get('a', 'two')?.metadata?.resourceVersion).toBe('3');
    expect(informer.get('a', 'one')).toBeUndefined();
  });

  it('after a 410 it lists again: objects gone from the list are deleted, changed ones updated', async () => {
    const a = obj('a', '1');
    const b = obj('b', '1', 'ns');
    const c = obj('c', '1');
    const e = obj('e', '1');
    const a2 = obj('a', '5');
    const d = obj('d', '5');
    const { informer, watch, events, listed } = setup([
      { metadata: { resourceVersion: '1' }, items: [a, b, c, e] },
      { metadata: { resourceVersion: '5' }, items: [a2, obj('c', '1'), d] },
    ]);
    await informer.start();
    events.length = 0;
    watch.last().end(gone);
    await settle();
    expect(listed()).toBe(2);
    expect(events).toEqual([
      ['delete', e],
      ['delete', b],
      ['update', a2],
      ['add', d],
    ]);
    expect(names(informer)).toEqual(['a', 'c', 'd']);
    expect(watch.calls).toHaveLength(2);
    expect(watch.last().query['resourceVersion']).toBe('5');
  });

  it('a 410 ERROR event forgets the resourceVersion: the clean end that follows lists again', async () => {
    const { informer, watch, listed } = setup([
      { metadata: { resourceVersion: '1' }, items: [] },
      { metadata: { resourceVersion: '8' }, items: [] },
    ]);
    await informer.start();
    watch.last().send('ADDED', obj('a', '3'));
    watch.last().send('ERROR', { code: 410 });
    watch.last().end(null);
    await settle();
    expect(listed()).toBe(2);
    expect(watch.last().query['resourceVersion']).toBe('8');
  });

  it('an ERROR event other than 410 keeps the resourceVersion (the stream ends it)', async () => {
    const { informer, watch, listed } = setup([{ metadata: { resourceVersion: '1' }, items: [] }]);
    await informer.start();
    watch.last().send('ADDED', obj('a', '3'));
    watch.last().send('ERROR', { code: 500 });
    watch.last().end(null);
    await settle();
    expect(listed()).toBe(1);
    expect(watch.last().query['resourceVersion']).toBe('3');
  });

  it('any other error ends the cycle: reported once to the error listeners, no list, no watch', async () => {
    const { informer, watch, events, listed } = setup([{ metadata: { resourceVersion: '1' }, items: [] }]);
    await informer.start();
    events.length = 0;
    const boom = Object.assign(new Error('boom'), { statusCode: 500 });
    watch.last().end(boom);
    await settle();
    expect(events).toEqual([['error', boom]]);
    expect(listed()).toBe(1);
    expect(watch.calls).toHaveLength(1);
  });

  it('a failed list is reported to the error listeners and no watch starts', async () => {
    const failed = new Error('list failed');
    const { informer, watch, events } = setup([failed]);
    await informer.start();
    expect(events).toEqual([['error', failed]]);
    expect(watch.calls).toHaveLength(0);
  });

  it('stop() aborts the watch it holds, and a stream ending after it starts nothing', async () => {
    const { informer, watch, listed } = setup([{ metadata: { resourceVersion: '1' }, items: [] }]);
    await informer.start();
    const w = watch.last();
    await informer.stop();
    expect(w.controller.signal.aborted).toBe(true);
    w.end(null);
    await settle();
    expect(watch.calls).toHaveLength(1);
    expect(listed()).toBe(1);
    // start() again runs a cycle: the resourceVersion is kept, so it watches without listing.
    await informer.start();
    expect(watch.calls).toHaveLength(2);
    expect(listed()).toBe(1);
  });

  it('objects without metadata or resourceVersion: keyed by "", null versions always an update', async () => {
    const bare = {} as KubernetesObject;
    const { informer, watch, events, listed } = setup([
      { metadata: { resourceVersion: '1' }, items: [bare] },
    ]);
    await informer.start();
    expect(informer.get('')).toBe(bare);
    const nullVersion = { metadata: { name: 'n', resourceVersion: null } } as unknown as KubernetesObject;
    const again = { metadata: { name: 'n', resourceVersion: null } } as unknown as KubernetesObject;
    watch.last().send('ADDED', nullVersion);
    watch.last().send('MODIFIED', again);
    const versioned = obj('', '5');
    watch.last().send('MODIFIED', versioned);
    expect(events.map(([e]) => e)).toEqual(['add', 'add', 'update', 'update']);
    expect(informer.get('')).toBe(versioned);
    // A bookmark without a resourceVersion: no version to watch from, so the next cycle lists.
    watch.last().send('BOOKMARK', {});
    watch.last().end(null);
    await settle();
    expect(listed()).toBe(2);
    expect(watch.last().query['resourceVersion']).toBe('1');
  });

  it('a delete leaves the namespace’s other objects; one of an unknown namespace is nothing', async () => {
    const { informer, watch, events } = setup([{ metadata: { resourceVersion: '1' }, items: [] }]);
    await informer.start();
    watch.last().send('ADDED', obj('a', '2', 'ns'));
    watch.last().send('ADDED', obj('b', '3', 'ns'));
    watch.last().send('DELETED', obj('a', '4', 'ns'));
    watch.last().send('DELETED', obj('a', '5', 'elsewhere'));
    expect(events.map(([e]) => e)).toEqual(['add', 'add', 'delete']);
    expect(informer.get('b', 'ns')?.metadata?.resourceVersion).toBe('3');
    watch.last().send('ADDED', obj('c', '6', 'ns'));
    expect(names(informer)).toEqual(['b', 'c']);
  });

  it('a listener added twice is called twice; one that adds another does not call the new one this time', async () => {
    const { informer, watch } = setup([{ metadata: { resourceVersion: '1' }, items: [] }]);
    const seen: string[] = [];
    const twice = () => seen.push('twice');
    informer.on('add', twice);
    informer.on('add', twice);
    informer.on('add', () => {
      seen.push('adder');
      informer.on('add', () => seen.push('late'));
    });
    await informer.start();
    watch.last().send('ADDED', obj('a', '2'));
    expect(seen).toEqual(['twice', 'twice', 'adder']);
  });
});
