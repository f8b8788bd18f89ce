/**
 * A watch answer read as events (src/kube/watch-lines.ts): lines split
 * anywhere across chunks, blank lines passed over, the line cap at exactly its
 * size (a whole line and a partial one), and each way a stream goes wrong
 * ending it once with a BadAnswerError that says what and shows the line.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BadAnswerError } from '../../src/kube/errors.js';
import { parseWatchLine, readWatchLines, type WatchEvent } from '../../src/kube/watch-lines.js';
import { sleep } from '../kit/eventually.js';

const event = (name: string, type = 'ADDED') => JSON.stringify({ type, object: { metadata: { name } } });

/** Feeds the chunks, then ends (or not); resolves with the events and every onEnd call. */
async function read(
  chunks: (string | Buffer)[],
  opts: { maxLineBytes?: number; finish?: 'end' | 'destroy' | 'error' } = {},
) {
  const body = new PassThrough();
  const events: WatchEvent[] = [];
  const ends: unknown[] = [];
  readWatchLines(body, {
    maxLineBytes: opts.maxLineBytes ?? 1_000,
    what: 'watch /w',
    onEvent: (e) => events.push(e),
    onEnd: (err) => ends.push(err),
  });
  for (const c of chunks) body.write(c);
  const finish = opts.finish ?? 'end';
  if (finish === 'end') body.end();
  else if (finish === 'destroy') body.destroy();
  else body.destroy(new Error('socket hang up'));
  await sleep(20);
  return { events, ends, body, names: events.map((e) => (e.object['metadata'] as { name: string }).name) };
}

describe('readWatchLines', () => {
  it('reads lines split anywhere across chunks, passing over blank ones; a clean end is null, once', async () => {
    const text = `${event('a')}\n\n  \n${event('b', 'MODIFIED')}\r\n${event('c', 'DELETED')}\n`;
    for (const size of [1, 7, 40, text.length]) {
      const chunks: string[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      const r = await read(chunks);
      expect(r.names, `chunks of ${size}`).toEqual(['a', 'b', 'c']);
      expect(r.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
      expect(r.ends).toEqual([null]);
    }
  });

  it('a stream ending with blanks after its last line ends cleanly', async () => {
    expect((await read([`${event('a')}\n  `])).ends).toEqual([null]);
  });

  it('holds a line of exactly the cap; one byte more ends the stream, whole or still arriving', async () => {
    const line = event('x'.repeat(50));
    expect((await read([`${line}\n`], { maxLineBytes: line.length })).names).toHaveLength(1);
    for (const chunks of [[`${line}\n`], [line.slice(0, 10), line.slice(10), '\n'], [line]]) {
      const r = await read(chunks, { maxLineBytes: line.length - 1 });
      expect(r.events).toEqual([]);
      expect(r.ends).toHaveLength(1);
      expect(r.ends[0]).toBeInstanceOf(BadAnswerError);
      expect(r.ends[0]).toMatchObject({
        reason: 'too-large',
        message: `watch /w: a watch event larger than ${line.length - 1} bytes`,
      });
      expect(r.body.destroyed).toBe(true);
    }
  });

  it('a partial line that crosses the cap ends the stream before its end arrives', async () => {
    const r = await read(['{"type":"ADDED",', '"object":{"metadata":{"name":"aaaaaaaaaa"}}}'], {
      maxLineBytes: 30,
      finish: 'destroy',
    });
    expect(r.ends).toHaveLength(1);
    expect(r.ends[0]).toMatchObject({ reason: 'too-large' });
  });

  it('a line that is not JSON ends the stream; the events before it were passed on, none after', async () => {
    const r = await read([`${event('a')}\nnot json\u0001é\n${event('b')}\n`]);
    expect(r.names).toEqual(['a']);
    expect(r.ends).toHaveLength(1);
    expect(r.ends[0]).toMatchObject({
      reason: 'not-json',
      message: 'watch /w: a watch line is not JSON: "not json??"',
    });
    expect(r.body.destroyed).toBe(true);
  });

  it('ends inside an event: truncated, showing the start of it', async () => {
    const r = await read([`${event('a')}\n{"type":"ADD`]);
    expect(r.names).toEqual(['a']);
    expect(r.ends).toEqual([
      expect.objectContaining({
        reason: 'truncated',
        message: 'watch /w: the stream ended inside an event: "{\\"type\\":\\"ADD"',
      }),
    ]);
  });

  it('a transport error, or a close before the end, ends the stream with it, once', async () => {
    const failed = await read([`${event('a')}\n`], { finish: 'error' });
    expect(failed.names).toEqual(['a']);
    expect(failed.ends).toHaveLength(1);
    expect((failed.ends[0] as Error).message).toBe('socket hang up');
    const closed = await read([`${event('a')}\n`], { finish: 'destroy' });
    expect(closed.ends).toEqual([new Error('watch /w: the connection closed before the stream ended')]);
  });
});

describe('parseWatchLine', () => {
  const parse = (value: unknown) => parseWatchLine(Buffer.from(JSON.stringify(value)), 'watch /w');
  it.each([
    { what: 'an event', value: { type: 'ADDED', object: { metadata: {} } }, ok: true },
    {
      what: 'an ERROR with a Status (no metadata)',
      value: { type: 'ERROR', object: { kind: 'Status', code: 410 } },
      ok: true,
    },
    { what: 'no type', value: { object: { metadata: {} } }, ok: false },
    { what: 'a type that is not text', value: { type: 1, object: { metadata: {} } }, ok: false },
    { what: 'no object', value: { type: 'ADDED' }, ok: false },
    { what: 'an object without metadata', value: { type: 'ADDED', object: {} }, ok: false },
    {
      what: 'metadata that is not an object',
      value: { type: 'ADDED', object: { metadata: 'x' } },
      ok: false,
    },
    { what: 'an ERROR without an object', value: { type: 'ERROR' }, ok: false },
    { what: 'an array', value: [1], ok: false },
  ])('$what', (t) => {
    const got = parse(t.value);
    if (t.ok) expect(got).toEqual(t.value);
    else
      expect(got).toMatchObject({
        reason: 'not-an-event',
        message: `watch /w: a watch line is not an event ({type, object.metadata}): ${JSON.stringify(JSON.stringify(t.value))}`,
      });
  });

  it('shows at most 80 characters of a bad line', () => {
    const got = parseWatchLine(Buffer.from(`x${'y'.repeat(200)}`), 'w') as BadAnswerError;
    expect(got.message).toBe(`w: a watch line is not JSON: "x${'y'.repeat(79)}"`);
  });
});
