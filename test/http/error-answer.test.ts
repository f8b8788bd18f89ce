/**
 * The answer to a request that failed without a review answer
 * (src/http/error-answer.ts) on its own: the status each error becomes, the
 * headers that go with it, the text the client sees, the log line and the
 * count for the webhook. error-answers.test.ts sees the routes through the app.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { errorAnswer, type Respond } from '../../src/http/error-answer.js';
import { MAX_LOGGED_CHARS } from '../../src/http/log-text.js';
import type { ReviewRecorder } from '../../src/http/review-record.js';

type Logged = [level: string, fields: Record<string, unknown>, message: string];

/** Runs the handler on one error; what it answered, logged and counted. */
function answer(
  err: Error & { statusCode?: number; closeConnection?: boolean },
  url = '/validate?timeout=10s',
) {
  const logged: Logged[] = [];
  const logger = {
    error: (fields: Record<string, unknown>, message: string) => void logged.push(['error', fields, message]),
    warn: (fields: Record<string, unknown>, message: string) => void logged.push(['warn', fields, message]),
  } as unknown as Logger;
  const headers: Record<string, string> = {};
  const reply = {
    header(name: string, value: string) {
      headers[name] = value;
      return reply;
    },
  } as unknown as FastifyReply;
  const answers: [code: number, payload: unknown][] = [];
  const respond: Respond = (r, code, payload) => {
    expect(r).toBe(reply);
    answers.push([code, payload]);
  };
  const counted: number[] = [];
  const record = { failed: (status: number) => void counted.push(status) } as unknown as ReviewRecorder;
  errorAnswer(logger, respond, record)(err as FastifyError, { url } as FastifyRequest, reply);
  return { logged, headers, answers, counted };
}

const failure = (statusCode: number | undefined, message = 'no', over: { closeConnection?: boolean } = {}) =>
  Object.assign(new Error(message), { statusCode, ...over });

describe('the error answer', () => {
  it.each([
    // statusCode, answered, headers
    [413, 413, { connection: 'close' }],
    [429, 429, { 'retry-after': '1' }],
    [400, 400, {}],
    [404, 400, {}],
    [415, 400, {}],
    [499, 400, {}],
    [500, 500, {}],
    [503, 500, {}],
    [undefined, 500, {}],
    [0, 500, {}],
  ])(
    'an error with statusCode %s is answered %i with headers %o, and counted so',
    (statusCode, status, headers) => {
      const r = answer(failure(statusCode, 'too bad'));
      expect(r.answers).toEqual([[status, { error: status === 500 ? 'internal error' : 'too bad' }]]);
      expect(r.headers).toEqual(headers);
      expect(r.counted).toEqual([status]);
    },
  );

  it('closes the connection when the error asks for it', () => {
    expect(answer(failure(400, 'x', { closeConnection: true })).headers).toEqual({ connection: 'close' });
    expect(answer(failure(400, 'x', { closeConnection: false })).headers).toEqual({});
  });

  it('logs a refusal as a warning with its status, reason and path (no query)', () => {
    const err = failure(413, 'body too large');
    expect(answer(err).logged).toEqual([
      ['warn', { status: 413, reason: 'body too large', url: '/validate' }, 'rejected request'],
    ]);
  });

  it('logs an unexpected error as an error with the error and the whole URL, and hides its text from the client', () => {
    const err = new Error('secret detail');
    const r = answer(err);
    expect(r.logged).toEqual([
      ['error', { err, url: '/validate?timeout=10s' }, 'unexpected error handling a request'],
    ]);
    expect(r.answers).toEqual([[500, { error: 'internal error' }]]);
  });

  it('cuts a long reason and URL in its log line, not in the answer', () => {
    const long = 'r'.repeat(MAX_LOGGED_CHARS + 1);
    const path = `/${'p'.repeat(MAX_LOGGED_CHARS)}`;
    const refused = answer(failure(400, long), `${path}?q=1`);
    expect(refused.logged[0]![1]).toEqual({
      status: 400,
      reason: `${'r'.repeat(MAX_LOGGED_CHARS)}...(1 more characters)`,
      url: `${path.slice(0, MAX_LOGGED_CHARS)}...(1 more characters)`,
    });
    expect(refused.answers).toEqual([[400, { error: long }]]);
    const failed = answer(new Error('x'), path);
    expect(failed.logged[0]![1]['url']).toBe(`${path.slice(0, MAX_LOGGED_CHARS)}...(1 more characters)`);
  });

  it('without a recorder (outside the webhook routes) answers the same, counting nothing', () => {
    const answers: unknown[] = [];
    const logger = { warn: () => {} } as unknown as Logger;
    errorAnswer(logger, (_r, code, payload) => void answers.push([code, payload]))(
      failure(400) as FastifyError,
      { url: '/x' } as FastifyRequest,
      { header: () => undefined } as unknown as FastifyReply,
    );
    expect(answers).toEqual([[400, { error: 'no' }]]);
  });
});
