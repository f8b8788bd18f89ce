/**
 * The line cap of src/kube/watch-lines.ts counted on the part of a line still
 * arriving: only the bytes after the last newline of a chunk count, and a
 * partial line of exactly the cap is held until its newline comes.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readWatchLines } from '../../src/kube/watch-lines.js';

const event = (name: string) => JSON.stringify({ type: 'ADDED', object: { metadata: { name } } });

function feed(chunks: string[], maxLineBytes: number): { names: string[]; ends: unknown[] } {
  const body = new PassThrough();
  const names: string[] = [];
  const ends: unknown[] = [];
  readWatchLines(body, {
    maxLineBytes,
    what: 'watch /w',
    onEvent: (e) => names.push((e.object['metadata'] as { name: string }).name),
    onEnd: (err) => ends.push(err),
  });
  // PassThrough emits each write synchronously to a flowing 'data' listener.
  for (const c of chunks) body.write(c);
  return { names, ends };
}

describe('the line cap on a line still arriving', () => {
  const line = event('x'.repeat(50));

  it('counts only the bytes after the chunk’s last newline', () => {
    const before = event('a'.repeat(40));
    const r = feed([`${before}\n${line.slice(0, 20)}`, `${line.slice(20)}\n`], line.length);
    expect(r.ends).toEqual([]);
    expect(r.names).toEqual(['a'.repeat(40), 'x'.repeat(50)]);
  });

  it('holds a partial line of exactly the cap until its newline', () => {
    const r = feed([line, '\n'], line.length);
    expect(r.ends).toEqual([]);
    expect(r.names).toEqual(['x'.repeat(50)]);
  });
});
