/**
 * Edges of src/kube/errors.ts and body.ts the other tests pass by: a
 * BadAnswerError's name (what a log's `err.type` shows), a Retry-After that
 * ends in digits but is not a number, and an answer whose stream fails while
 * it is read.
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readBoundedBody } from '../../src/kube/body.js';
import { BadAnswerError, parseRetryAfter } from '../../src/kube/errors.js';

describe('errors and bodies at their edges', () => {
  it('a BadAnswerError is named so', () => {
    const err = new BadAnswerError('not-json', 'GET /x: not JSON');
    expect(err.name).toBe('BadAnswerError');
    expect(String(err)).toBe('BadAnswerError: GET /x: not JSON');
  });

  it.each(['x5', 'abc5'])('Retry-After %j is unreadable', (value) => {
    expect(parseRetryAfter(value, 0)).toBeUndefined();
  });

  it('an answer whose stream fails rejects with that error', async () => {
    const response = new PassThrough();
    let destroyed = false;
    const request = { destroy: () => (destroyed = true) } as unknown as ClientRequest;
    const read = readBoundedBody(request, response as unknown as IncomingMessage, 100, 'GET /x');
    response.write('{"a":');
    const failure = new Error('socket hang up');
    response.destroy(failure);
    await expect(read).rejects.toBe(failure);
    expect(destroyed).toBe(false);
  });
});
