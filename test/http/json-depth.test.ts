import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from '../../src/http/json-depth.js';

/** The nesting of a parsed value, the slow way: what the scan must agree with. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v !== null && typeof v === 'object') {
      deepest = Math.max(deepest, d + 1);
      for (const child of Object.values(v)) stack.push([child, d + 1]);
    }
  }
  return deepest;
}

const bytes = (text: string) => Buffer.from(text, 'utf8');
const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

describe('nestsDeeperThan', () => {
  it('agrees with the depth of the parsed value, strings full of brackets and escapes included', () => {
    const tricky = fc.constantFrom('[', ']', '{', '}', '"', '\\', '\\"', '\\\\', 'é', '\u2028', 'x');
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.array(tricky).map((parts) => parts.join('')),
        fc.integer(),
        fc.array(tie('node'), { maxLength: 3 }),
        fc.dictionary(
          fc.array(tricky).map((parts) => parts.join('')),
          tie('node'),
          { maxKeys: 3 },
        ),
      ),
    })).node;
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 8 }), (v, limit) => {
        const text = JSON.stringify(v);
        // Below the length short-cut the answer is trivially false; pad with spaces to reach the scan.
        const padded = bytes(text + ' '.repeat(limit + 1));
        expect(nestsDeeperThan(padded, limit)).toBe(depthOf(v) > limit);
      }),
      { numRuns: 1_000 },
    );
  });

  it('finds the 10,001st level and accepts the 10,000th', () => {
    expect(nestsDeeperThan(bytes(deep(10_001)), 10_000)).toBe(true);
    expect(nestsDeeperThan(bytes(deep(10_000)), 10_000)).toBe(false);
    expect(nestsDeeperThan(bytes(`{"a":${deep(10_000)}}`), 10_000)).toBe(true);
  });

  it('does not count brackets inside a string, even after escaped quotes and backslashes', () => {
    const inside = `"\\\\\\"${'['.repeat(20_000)}"`;
    expect(nestsDeeperThan(bytes(`[${inside}]`), 10_000)).toBe(false);
    // An escaped backslash ends before the quote: the brackets after it are structure.
    expect(nestsDeeperThan(bytes(`["\\\\",${deep(10_001)}]`), 10_000)).toBe(true);
  });

  it('gives up without judging an unterminated string (JSON.parse reports it)', () => {
    expect(nestsDeeperThan(bytes(`["${'['.repeat(20_000)}`), 10_000)).toBe(false);
  });
});
