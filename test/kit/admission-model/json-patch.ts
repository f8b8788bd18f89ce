/**
 * RFC 6902 JSON patch, the one patch type the API server takes from a
 * mutating webhook (mutating/dispatcher.go: patchType JSONPatch, applied
 * with evanphx/json-patch to the object as JSON; an op that cannot apply is
 * an internal error that refuses the write whatever the failurePolicy).
 */
import { isObj } from './types.js';

export interface PatchOp {
  readonly op: string;
  readonly path: string;
  readonly value?: unknown;
  readonly from?: string;
}

function tokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`JSON pointer "${pointer}" does not start with /`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function parentOf(doc: unknown, pointer: string): { parent: unknown; last: string } {
  const ts = tokens(pointer);
  if (ts.length === 0) throw new Error('the root cannot be the target of this operation');
  let cur = doc;
  for (const t of ts.slice(0, -1)) {
    cur = Array.isArray(cur) ? cur[Number(t)] : isObj(cur) ? cur[t] : undefined;
    if (cur === undefined) throw new Error(`path ${pointer}: missing parent`);
  }
  return { parent: cur, last: ts[ts.length - 1]! };
}

function get(doc: unknown, pointer: string): unknown {
  let cur = doc;
  for (const t of tokens(pointer)) {
    cur = Array.isArray(cur) ? cur[Number(t)] : isObj(cur) ? cur[t] : undefined;
    if (cur === undefined) throw new Error(`path ${pointer} does not exist`);
  }
  return cur;
}

function index(arr: unknown[], last: string, forAdd: boolean): number {
  if (forAdd && last === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(last)) throw new Error(`"${last}" is not an array index`);
  const i = Number(last);
  if (i > arr.length || (!forAdd && i === arr.length)) throw new Error(`index ${i} is out of bounds`);
  return i;
}

function add(doc: unknown, path: string, value: unknown): void {
  const { parent, last } = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(index(parent, last, true), 0, value);
  else if (isObj(parent)) parent[last] = value;
  else throw new Error(`path ${path}: parent is not a container`);
}

function remove(doc: unknown, path: string): void {
  const { parent, last } = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(index(parent, last, false), 1);
  else if (isObj(parent) && Object.hasOwn(parent, last)) delete parent[last];
  else throw new Error(`path ${path} does not exist`);
}

/** Applies the patch to a copy of `doc`; throws on an op that cannot apply. */
export function applyPatch<T>(doc: T, patch: readonly PatchOp[]): T {
  const out = structuredClone(doc);
  for (const op of patch) {
    const value = structuredClone(op.value);
    switch (op.op) {
      case 'add':
        add(out, op.path, value);
        break;
      case 'remove':
        remove(out, op.path);
        break;
      case 'replace':
        remove(out, op.path);
        add(out, op.path, value);
        break;
      case 'test':
        if (JSON.stringify(get(out, op.path)) !== JSON.stringify(value))
          throw new Error(`testing value ${op.path} failed`);
        break;
      case 'move':
      case 'copy': {
        const moved = structuredClone(get(out, op.from ?? ''));
        if (op.op === 'move') remove(out, op.from ?? '');
        add(out, op.path, moved);
        break;
      }
      default:
        throw new Error(`unexpected patch operation "${op.op}"`);
    }
  }
  return out;
}
