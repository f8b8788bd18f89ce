/**
 * A watch answer's body read as events: one JSON object per line, each
 * `{type, object}`. A line longer than the cap ends the stream before more of
 * it is held (memory stays bounded whatever the server sends); a line that is
 * not JSON, not an event, or cut off by the end of the stream ends it with a
 * BadAnswerError naming what was wrong, so the caller keeps its objects,
 * counts the fault and restarts with backoff. Nothing is skipped silently.
 */
import type { Readable } from 'node:stream';
import { asRecord, own, type JsonRecord } from '../json/record.js';
import { BadAnswerError } from './errors.js';

export interface WatchEvent {
  readonly type: string;
  readonly object: JsonRecord;
}

export interface WatchLinesOptions {
  /** Largest event line held. */
  readonly maxLineBytes: number;
  /** Names the stream in errors (`watch /apis/…`). */
  readonly what: string;
  readonly onEvent: (event: WatchEvent) => void;
  /** Once: null when the server ended the stream cleanly, else why it ended. */
  readonly onEnd: (err: unknown) => void;
}

const NEWLINE = 0x0a;

/** The first characters of a bad line, printable, for the log. */
function preview(line: Buffer): string {
  const text = line.subarray(0, 80).toString('utf8');
  return JSON.stringify(text.replace(/[^\x20-\x7e]/g, '?'));
}

/** One line as an event, or the error saying why it is not one. */
export function parseWatchLine(line: Buffer, what: string): WatchEvent | BadAnswerError {
  let value: unknown;
  try {
    value = JSON.parse(line.toString('utf8')) as unknown;
  } catch {
    return new BadAnswerError('not-json', `${what}: a watch line is not JSON: ${preview(line)}`);
  }
  const event = asRecord(value);
  const type = own(event, 'type');
  const object = asRecord(own(event, 'object'));
  // Every event but ERROR (whose object is a Status) carries an object with metadata.
  if (typeof type !== 'string' || !object || (type !== 'ERROR' && !asRecord(own(object, 'metadata'))))
    return new BadAnswerError(
      'not-an-event',
      `${what}: a watch line is not an event ({type, object.metadata}): ${preview(line)}`,
    );
  return { type, object };
}

export function readWatchLines(body: Readable, opts: WatchLinesOptions): void {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let ended = false;
  const end = (err: unknown): void => {
    if (ended) return;
    ended = true;
    pending = [];
    if (err !== null) body.destroy();
    opts.onEnd(err);
  };
  const tooLarge = (): BadAnswerError =>
    new BadAnswerError('too-large', `${opts.what}: a watch event larger than ${opts.maxLineBytes} bytes`);
  const line = (bytes: Buffer): void => {
    if (bytes.toString('latin1').trim() === '') return;
    const event = parseWatchLine(bytes, opts.what);
    if (event instanceof BadAnswerError) end(event);
    else opts.onEvent(event);
  };
  body.on('data', (chunk: Buffer) => {
    let start = 0;
    for (;;) {
      if (ended) return;
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      const whole = pendingBytes > 0 ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      pendingBytes = 0;
      if (whole.length > opts.maxLineBytes) return end(tooLarge());
      line(whole);
      start = nl + 1;
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
      if (pendingBytes > opts.maxLineBytes) end(tooLarge());
    }
  });
  body.on('end', () => {
    const rest = Buffer.concat(pending);
    if (rest.toString('latin1').trim() !== '')
      end(
        new BadAnswerError('truncated', `${opts.what}: the stream ended inside an event: ${preview(rest)}`),
      );
    else end(null);
  });
  body.on('error', (err) => end(err));
  body.on('close', () => end(new Error(`${opts.what}: the connection closed before the stream ended`)));
}
