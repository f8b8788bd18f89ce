/**
 * A list-then-watch cache of one resource: list it, keep the objects by
 * namespace and name, then watch from the list's resourceVersion and apply
 * each event; when a watch ends cleanly, watch again from the last
 * resourceVersion seen; after a 410 Gone, list again. Any other error stops
 * it and is reported to the `error` listeners (the caller restarts it).
 *
 * The project's own, in place of @kubernetes/client-node's ListWatch (same
 * cycle and events): importing that one loads the client's generated models
 * and API classes, tens of MiB of heap in every replica for a few dozen lines
 * of bookkeeping.
 */
import { httpStatusOf } from './errors.js';

/** What the cache reads of an object: its name, namespace and resourceVersion. */
export interface KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

export interface KubernetesListObject<T extends KubernetesObject> {
  metadata?: { resourceVersion?: string };
  items: T[];
}

/**
 * One watch request: `callback` gets each event (`ADDED`, `MODIFIED`,
 * `DELETED`, `BOOKMARK`, `ERROR`), `done` is called once when the stream
 * ends (null: a clean end). The controller it resolves with aborts it.
 */
export interface Watcher {
  watch(
    path: string,
    queryParams: Record<string, string | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController>;
}

export type InformerEvent = 'add' | 'update' | 'delete' | 'error';

export interface InformerOptions<T extends KubernetesObject> {
  readonly path: string;
  readonly watch: Watcher;
  readonly list: () => Promise<KubernetesListObject<T>>;
  readonly fieldSelector?: string | undefined;
}

function keyOf(obj: KubernetesObject): { namespace: string; name: string } {
  return { namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '' };
}

function sameVersion(a: KubernetesObject, b: KubernetesObject): boolean {
  const version = a.metadata?.resourceVersion;
  return version !== undefined && version !== null && version === b.metadata?.resourceVersion;
}

export class Informer<T extends KubernetesObject> {
  /** namespace ('' for cluster-scoped) → name → object. */
  private objects = new Map<string, Map<string, T>>();
  private readonly listeners: Record<InformerEvent, Array<(arg: unknown) => void>> = {
    add: [],
    update: [],
    delete: [],
    error: [],
  };
  private resourceVersion = '';
  private stopped = false;
  private request: AbortController | undefined;

  constructor(private readonly opts: InformerOptions<T>) {}

  on(event: InformerEvent, listener: (arg: unknown) => void): void {
    this.listeners[event].push(listener);
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.cycle(null);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abortRequest();
  }

  get(name: string, namespace?: string): T | undefined {
    return this.objects.get(namespace ?? '')?.get(name);
  }

  list(): T[] {
    const all: T[] = [];
    for (const byName of this.objects.values()) all.push(...byName.values());
    return all;
  }

  private emit(event: InformerEvent, arg: unknown): void {
    for (const listener of this.listeners[event].slice()) listener(arg);
  }

  private abortRequest(): void {
    this.request?.abort();
    this.request = undefined;
  }

  /** After a watch ends (or at start, with null): list when needed, then watch again. */
  private async cycle(err: unknown): Promise<void> {
    this.abortRequest();
    if (err && httpStatusOf(err) === 410) this.resourceVersion = '';
    else if (err) {
      this.emit('error', err);
      return;
    }
    if (this.stopped) return;
    if (this.resourceVersion === '') {
      let listed: KubernetesListObject<T>;
      try {
        listed = await this.opts.list();
      } catch (listErr) {
        this.emit('error', listErr);
        return;
      }
      this.replaceAll(listed.items);
      this.resourceVersion = listed.metadata?.resourceVersion ?? '';
    }
    const query: Record<string, string | undefined> = { resourceVersion: this.resourceVersion };
    if (this.opts.fieldSelector !== undefined) query['fieldSelector'] = this.opts.fieldSelector;
    this.request = await this.opts.watch.watch(
      this.opts.path,
      query,
      (phase, obj) => this.onEvent(phase, obj as T),
      (doneErr) => void this.cycle(doneErr),
    );
  }

  /** A fresh list: objects no longer listed are deleted, the others added or updated. */
  private replaceAll(items: readonly T[]): void {
    const listed = new Map<string, Set<string>>();
    for (const item of items) {
      const { namespace, name } = keyOf(item);
      const names = listed.get(namespace) ?? new Set<string>();
      names.add(name);
      listed.set(namespace, names);
    }
    for (const [namespace, byName] of this.objects) {
      const keep = listed.get(namespace);
      for (const [name, obj] of byName) {
        if (keep?.has(name)) continue;
        byName.delete(name);
        this.emit('delete', obj);
      }
      if (byName.size === 0) this.objects.delete(namespace);
    }
    for (const item of items) this.addOrUpdate(item);
  }

  private addOrUpdate(obj: T): void {
    const { namespace, name } = keyOf(obj);
    let byName = this.objects.get(namespace);
    if (!byName) {
      byName = new Map();
      this.objects.set(namespace, byName);
    }
    const found = byName.get(name);
    if (!found) {
      byName.set(name, obj);
      this.emit('add', obj);
    } else if (!sameVersion(found, obj)) {
      byName.set(name, obj);
      this.emit('update', obj);
    }
  }

  private remove(obj: T): void {
    const { namespace, name } = keyOf(obj);
    const byName = this.objects.get(namespace);
    if (!byName?.delete(name)) return;
    this.emit('delete', obj);
    if (byName.size === 0) this.objects.delete(namespace);
  }

  private onEvent(phase: string, obj: T): void {
    switch (phase) {
      case 'ERROR':
        // A 410 here is followed by the end of the stream: the next cycle lists again.
        if (httpStatusOf(obj) === 410) this.resourceVersion = '';
        return;
      case 'ADDED':
      case 'MODIFIED':
        this.addOrUpdate(obj);
        break;
      case 'DELETED':
        this.remove(obj);
        break;
      default:
        // BOOKMARK: only its resourceVersion counts.
        break;
    }
    this.resourceVersion = obj.metadata?.resourceVersion ?? '';
  }
}
