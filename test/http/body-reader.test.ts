/**
 * The admission body reader on a stream of its own, without a server: what it
 * answers for each kind of body (parsed, empty, not JSON, too deep, over the
 * limit, cut off, broken), when it reads the rest of an over-limit body and
 * when it gives up on it, and the byte budget it waits in. The same paths are
 * seen end to end in body-limits.test.ts and the reliability suites; these run
 * inside the mutation subset (vitest.mutation.config.ts).
 */
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createBodyBudget } from '../../src/http/body-budget.js';
import { HttpError, readJsonBody, readJsonBodyWithin, type BodyLimits } from '../../src/http/body.js';

const LIMITS: BodyLimits = { maxBytes: 64, drainBytes: 256, drainMs: 60_000, maxDepth: 3 };

interface Outcome {
  readonly err: Error | null;
  readonly body?: unknown;
  /** How often `done` was called by the time the stream had nothing more to say. */
  readonly calls: () => number;
}

/** Runs the reader on a fresh stream; `feed` writes to it. Resolves at the first `done`. */
function read(
  feed: (stream: PassThrough) => void,
  options: { declaredLength?: number; limits?: Partial<BodyLimits>; refusal?: HttpError } = {},
): Promise<Outcome & { stream: PassThrough }> {
  const stream = new PassThrough();
  let calls = 0;
  return new Promise((resolve) => {
    readJsonBody(
      stream as unknown as IncomingMessage,
      {
        declaredLength: options.declaredLength,
        limits: { ...LIMITS, ...options.limits },
        ...(options.refusal ? { refusal: options.refusal } : {}),
      },
      (err, body) => {
        calls++;
        resolve({ err, body, calls: () => calls, stream });
      },
    );
    feed(stream);
  });
}

const send = (text: string | Buffer) => (s: PassThrough) => s.end(text);

function httpError(err: Error | null): HttpError {
  expect(err).toBeInstanceOf(HttpError);
  return err as HttpError;
}

describe('readJsonBody', () => {
  it('parses a body within the limit, in any number of chunks', async () => {
    const r = await read((s) => {
      s.write('{"a":');
      s.write('[1,');
      s.end('{"b":"c"}]}');
    });
    expect(r.err).toBeNull();
    expect(r.body).toEqual({ a: [1, { b: 'c' }] });
  });

  it('keeps __proto__ as an ordinary own property', async () => {
    const r = await read(send('{"__proto__":{"polluted":true}}'));
    expect(r.err).toBeNull();
    expect(Object.prototype.hasOwnProperty.call(r.body, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('accepts a body of exactly maxBytes and refuses one byte more with 413, keeping the connection', async () => {
    const exact = `"${'x'.repeat(LIMITS.maxBytes - 2)}"`;
    expect((await read(send(exact))).body).toBe('x'.repeat(LIMITS.maxBytes - 2));
    const over = await read(send(`${exact} `));
    const err = httpError(over.err);
    expect(err.statusCode).toBe(413);
    expect(err.message).toBe('request body is larger than 64 bytes');
    expect(err.closeConnection).toBe(false);
  });

  it('answers 400 for an empty body', async () => {
    const err = httpError((await read(send(''))).err);
    expect([err.statusCode, err.message, err.closeConnection]).toEqual([
      400,
      'empty body: expected an AdmissionReview',
      false,
    ]);
  });

  it('answers 400 naming the parse error for text that is not JSON', async () => {
    const err = httpError((await read(send('{"a": nope}'))).err);
    expect(err.statusCode).toBe(400);
    expect(err.message).toMatch(/^body is not valid JSON: \S/);
    expect(err.closeConnection).toBe(false);
  });

  it('refuses a body nested deeper than maxDepth before parsing it, and accepts maxDepth itself', async () => {
    const deep = await read(send('[[[[1]]]]       '));
    const err = httpError(deep.err);
    expect([err.statusCode, err.message]).toEqual([400, 'body nests deeper than 3 levels']);
    expect((await read(send('[[[1]]]          '))).body).toEqual([[[1]]]);
  });

  it('reads and discards the rest of an over-limit body, then answers 413 once it ends', async () => {
    let ended = false;
    const r = await read((s) => {
      s.write('x'.repeat(100));
      s.write('y'.repeat(100));
      s.on('end', () => (ended = true));
      s.end();
    });
    expect(ended).toBe(true);
    expect(httpError(r.err).statusCode).toBe(413);
    expect(httpError(r.err).closeConnection).toBe(false);
  });

  it('starts discarding at once when the declared length is over the limit', async () => {
    // Only 10 bytes of valid JSON arrive, but the declared length already decided.
    const r = await read(send('{"a":true}'), { declaredLength: LIMITS.maxBytes + 1 });
    expect(httpError(r.err).statusCode).toBe(413);
    const fits = await read(send('{"a":true}'), { declaredLength: LIMITS.maxBytes });
    expect(fits.body).toEqual({ a: true });
  });

  it('gives up discarding past drainBytes: 413 and close, without waiting for the end', async () => {
    const r = await read((s) => {
      s.write('x'.repeat(LIMITS.maxBytes + 1));
      s.write('x'.repeat(LIMITS.drainBytes));
      s.write('x');
    });
    const err = httpError(r.err);
    expect([err.statusCode, err.closeConnection]).toEqual([413, true]);
    expect(r.stream.listenerCount('data')).toBe(0);
  });

  it('discards exactly drainBytes and still answers 413 without closing once the body ends', async () => {
    const r = await read((s) => {
      s.write('x'.repeat(LIMITS.maxBytes + 1));
      s.write('x'.repeat(LIMITS.drainBytes));
      s.end();
    });
    expect(httpError(r.err).closeConnection).toBe(false);
  });

  it('gives up on a body that stops arriving after drainMs: 413 and close', async () => {
    const r = await read((s) => s.write('x'.repeat(LIMITS.maxBytes + 1)), { limits: { drainMs: 20 } });
    const err = httpError(r.err);
    expect([err.statusCode, err.closeConnection]).toEqual([413, true]);
  });

  it('answers 400 and close for a stream error, and calls back only once', async () => {
    const r = await read((s) => {
      s.write('{"a":');
      s.destroy(new Error('boom'));
    });
    const err = httpError(r.err);
    expect([err.statusCode, err.message, err.closeConnection]).toEqual([
      400,
      'request body could not be read: boom',
      true,
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.calls()).toBe(1);
  });

  it('answers 400 and close for a connection that closes before the body ends', async () => {
    const r = await read((s) => {
      s.write('{"a":');
      s.destroy();
    });
    const err = httpError(r.err);
    expect([err.statusCode, err.message, err.closeConnection]).toEqual([
      400,
      'request body could not be read: connection closed',
      true,
    ]);
  });

  it('answers a stream that is already destroyed at once, and listens to nothing', async () => {
    const r = await read((s) => s.destroy(), {});
    expect(httpError(r.err).message).toBe('request body could not be read: connection closed');
    const gone = new PassThrough();
    gone.destroy();
    let answer: Error | null = null;
    readJsonBody(
      gone as unknown as IncomingMessage,
      { declaredLength: undefined, limits: LIMITS },
      (err) => (answer = err),
    );
    expect(httpError(answer).statusCode).toBe(400);
    expect(gone.listenerCount('data')).toBe(0);
  });

  it('stops listening once it has answered', async () => {
    const r = await read(send('{"a":1}'));
    for (const event of ['data', 'end', 'error', 'close']) expect(r.stream.listenerCount(event)).toBe(0);
  });

  it('with a refusal, reads the body and answers the refusal instead of parsing', async () => {
    const refusal = new HttpError(429, 'too many request bodies in flight; retry', false);
    const r = await read(send('{"a":1}'), { refusal });
    const err = httpError(r.err);
    expect([err.statusCode, err.message, err.closeConnection]).toEqual([429, refusal.message, false]);
    // A refusal that asks for a close keeps it.
    const closing = await read(send('{"a":1}'), { refusal: new HttpError(429, 'x', true) });
    expect(httpError(closing.err).closeConnection).toBe(true);
    // Past drainBytes the refusal still comes, now with a close.
    const long = await read((s) => s.write('x'.repeat(LIMITS.drainBytes + 1)), { refusal });
    expect([httpError(long.err).statusCode, httpError(long.err).closeConnection]).toEqual([429, true]);
  });
});

describe('readJsonBodyWithin', () => {
  const limits = { ...LIMITS, waitMs: 20 };
  const budgetOf = (bytes: number) =>
    createBodyBudget({ budgetBytes: bytes, smallBytes: 0, smallLaneBytes: 0 });

  function within(budget: ReturnType<typeof budgetOf>, declaredLength: number | undefined) {
    const stream = new PassThrough();
    const answer = new Promise<{ err: Error | null; body?: unknown }>((resolve) =>
      readJsonBodyWithin(
        budget,
        stream as unknown as IncomingMessage,
        { declaredLength, limits },
        (err, body) => resolve({ err, body }),
      ),
    );
    return { stream, answer };
  }

  it('reserves the declared length while the body is read and releases it after', async () => {
    const budget = budgetOf(100);
    const { stream, answer } = within(budget, 7);
    expect(budget.inFlight()).toBe(7);
    stream.end('{"a":1}');
    expect((await answer).body).toEqual({ a: 1 });
    expect(budget.inFlight()).toBe(0);
  });

  it('reserves the largest allowed body when no length is declared', () => {
    const budget = budgetOf(1000);
    const { stream } = within(budget, undefined);
    expect(budget.inFlight()).toBe(LIMITS.maxBytes);
    stream.destroy();
  });

  it('does not reserve anything for a body declared over the limit: it is only discarded', async () => {
    const budget = budgetOf(100);
    const { stream, answer } = within(budget, LIMITS.maxBytes + 1);
    expect(budget.inFlight()).toBe(0);
    stream.end('x');
    expect(httpError((await answer).err).statusCode).toBe(413);
  });

  it('releases the reservation after a failed read too: broken stream, closed connection, not JSON, too deep', async () => {
    const budget = budgetOf(10);
    const failures: ((s: PassThrough) => void)[] = [
      (s) => s.destroy(new Error('reset')),
      (s) => s.destroy(),
      (s) => s.end('not json'),
      (s) => s.end('[[[[1]]]]'),
    ];
    for (const fail of failures) {
      const { stream, answer } = within(budget, 8);
      expect(budget.inFlight()).toBe(8);
      fail(stream);
      expect(httpError((await answer).err).statusCode).toBe(400);
      expect(budget.inFlight()).toBe(0);
    }
    // So the next body still finds room at once, instead of a 429 after waitMs.
    const next = within(budget, 8);
    expect(budget.waiting()).toBe(0);
    next.stream.end('{"a":1}');
    expect((await next.answer).body).toEqual({ a: 1 });
  });

  it('answers 429 (after reading the body) when no room comes within waitMs', async () => {
    const budget = budgetOf(10);
    const first = within(budget, 8);
    const second = within(budget, 8);
    expect(budget.waiting()).toBe(1);
    second.stream.end('{"b":2}');
    const err = httpError((await second.answer).err);
    expect([err.statusCode, err.message, err.closeConnection]).toEqual([
      429,
      'too many request bodies in flight; retry',
      false,
    ]);
    first.stream.end('{"a":1}');
    expect((await first.answer).body).toEqual({ a: 1 });
    expect(budget.inFlight()).toBe(0);
  });
});
