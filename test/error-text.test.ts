/**
 * The one reading of a thrown value's text: an Error's message, anything else as text (a thrown
 * string read as `(err as Error).message` was undefined).
 */
import { describe, expect, it } from 'vitest';
import { errorMessage, firstLine } from '../src/error-text.js';

describe('errorMessage and firstLine', () => {
  it.each([
    {
      name: 'an Error',
      thrown: new Error('cannot read x\nsecond line'),
      message: 'cannot read x\nsecond line',
    },
    { name: 'a TypeError', thrown: new TypeError('bad type'), message: 'bad type' },
    { name: 'a string', thrown: 'plain text', message: 'plain text' },
    { name: 'a number', thrown: 42, message: '42' },
    { name: 'undefined', thrown: undefined, message: 'undefined' },
    { name: 'an object', thrown: { code: 'E' }, message: '[object Object]' },
  ])('$name reads as its text', ({ thrown, message }) => {
    expect(errorMessage(thrown)).toBe(message);
    expect(firstLine(thrown)).toBe(message.split('\n')[0]);
  });
});
