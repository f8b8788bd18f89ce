import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonText, plainText } from '../../src/rules/json-text.js';
import { quote } from '../../src/rules/messages.js';

const deep = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));

describe('jsonText', () => {
  it('renders what JSON.stringify renders for decoded JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        expect(jsonText(value)).toBe(JSON.stringify(value));
      }),
      { numRuns: 500 },
    );
  });

  it('renders 10,000 levels where JSON.stringify throws', () => {
    const value = deep(10_000);
    expect(() => JSON.stringify(deep(20_000))).toThrow(RangeError);
    expect(jsonText(value)).toBe('['.repeat(10_000) + ']'.repeat(10_000));
  });

  it('stops soon after the cap', () => {
    const text = jsonText(
      Array.from({ length: 100_000 }, (_, i) => i),
      20,
    );
    expect(text.length).toBeGreaterThan(20);
    expect(text.length).toBeLessThan(30);
    expect(text.startsWith('[0,1,2,3,4,5,6,7,8,9,')).toBe(true);
  });

  it('quote() and plainText() cap deep values instead of throwing', () => {
    expect(quote(deep(10_000), 10)).toBe('[[[[[[[[[[...');
    expect(plainText(deep(10_000), 4)).toBe('[[[[...');
    expect(plainText(5)).toBe('5');
    expect(plainText(undefined)).toBe('undefined');
  });
});
