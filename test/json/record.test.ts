/**
 * Typed reads of decoded JSON: a value of another type, an inherited key or a non-object reads as
 * absent.
 */
import { describe, expect, it } from 'vitest';
import { asRecord, numberAt, stringAt } from '../../src/json/record.js';

const base = asRecord(
  JSON.parse('{"s":"text","n":7,"z":0,"e":"","o":{},"a":[1],"nil":null,"__proto__":"own"}'),
);

describe('stringAt and numberAt', () => {
  it.each([
    { key: 's', string: 'text', number: undefined },
    { key: 'e', string: '', number: undefined },
    { key: 'n', string: undefined, number: 7 },
    { key: 'z', string: undefined, number: 0 },
    { key: 'o', string: undefined, number: undefined },
    { key: 'a', string: undefined, number: undefined },
    { key: 'nil', string: undefined, number: undefined },
    { key: 'missing', string: undefined, number: undefined },
    { key: '__proto__', string: 'own', number: undefined },
    { key: 'toString', string: undefined, number: undefined },
    { key: 'constructor', string: undefined, number: undefined },
  ])('$key: string $string, number $number', ({ key, string, number }) => {
    expect(stringAt(base, key)).toBe(string);
    expect(numberAt(base, key)).toBe(number);
  });

  it('reads nothing from an absent record', () => {
    expect(stringAt(undefined, 's')).toBeUndefined();
    expect(numberAt(undefined, 'n')).toBeUndefined();
  });
});
