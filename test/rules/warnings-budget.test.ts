/**
 * The apiserver drops admission warnings past 4,096 characters in total. The
 * engine keeps every answer within that budget, ending with a line that says
 * how many were left out, so a reader learns that more exist.
 */
import { describe, expect, it } from 'vitest';
import { budgetWarnings } from '../../src/rules/warnings.js';

const total = (lines: readonly string[]): number => lines.reduce((n, l) => n + l.length, 0);

describe('the total warnings budget', () => {
  it('keeps the answer under 4,096 characters and counts what it left out', () => {
    const lines = Array.from(
      { length: 100 },
      (_, i) => `status.addresses[${i % 16}].value: ${'x'.repeat(90)}`,
    );
    const kept = budgetWarnings(lines);
    expect(total(kept)).toBeLessThanOrEqual(4096);
    expect(kept.length).toBeLessThan(lines.length);
    expect(kept.at(-1)).toBe(`${lines.length - (kept.length - 1)} more warnings not shown`);
    expect(kept.slice(0, -1)).toEqual(lines.slice(0, kept.length - 1));
  });

  it('leaves a list within the budget whole', () => {
    const lines = ['a warning', 'another'];
    expect(budgetWarnings(lines)).toEqual(lines);
  });
});
