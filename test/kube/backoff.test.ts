/**
 * The one backoff: growth per failure, the cap, and the jitter's range, with the randomness fixed.
 */
import { describe, expect, it } from 'vitest';
import { backoffDelay, JITTER_20_PERCENT, JITTER_HALF, type BackoffPolicy } from '../../src/kube/backoff.js';

const base: BackoffPolicy = { initialMs: 500, maxMs: 15_000 };
/** random() = 0.5: the ±20 % jitter's middle, so the wait is the capped delay itself. */
const middle = () => 0.5;

describe('backoffDelay', () => {
  it.each([
    { failures: 0, ms: 500 },
    { failures: 1, ms: 500 },
    { failures: 2, ms: 1_000 },
    { failures: 3, ms: 2_000 },
    { failures: 6, ms: 15_000 },
    { failures: 5, ms: 8_000 },
    { failures: 1_000, ms: 15_000 },
  ])('doubles from initialMs and stops at maxMs: $failures failures wait $ms ms', ({ failures, ms }) => {
    expect(backoffDelay(base, failures, middle)).toBe(ms);
  });

  it.each([
    { factor: 3, failures: 3, ms: 4_500 },
    { factor: 1, failures: 9, ms: 500 },
    { factor: 10, failures: 3, ms: 15_000 },
  ])('grows by factor $factor: $failures failures wait $ms ms', ({ factor, failures, ms }) => {
    expect(backoffDelay({ ...base, factor }, failures, middle)).toBe(ms);
  });

  it.each([
    { jitter: JITTER_20_PERCENT, random: 0, ms: 1_600 },
    { jitter: JITTER_20_PERCENT, random: 0.25, ms: 1_800 },
    { jitter: JITTER_20_PERCENT, random: 0.999_999, ms: 2_400 },
    { jitter: JITTER_HALF, random: 0, ms: 1_000 },
    { jitter: JITTER_HALF, random: 0.5, ms: 1_500 },
    { jitter: JITTER_HALF, random: 0.999_999, ms: 2_000 },
  ])(
    'jitters within its range: floor $jitter.floor, random() $random waits $ms ms',
    ({ jitter, random, ms }) => {
      expect(backoffDelay({ ...base, jitter }, 3, () => random)).toBe(ms);
    },
  );

  it('jitters the capped delay, so a wait past the cap stays within the range around the cap', () => {
    expect(backoffDelay(base, 40, () => 0)).toBe(12_000);
    expect(backoffDelay(base, 40, () => 0.999_999)).toBe(18_000);
  });

  it('is ±20 % by default and gives whole milliseconds', () => {
    for (let i = 0; i < 200; i++) {
      const ms = backoffDelay({ initialMs: 333, maxMs: 10_000 }, 2, Math.random);
      expect(ms).toBeGreaterThanOrEqual(Math.round(666 * 0.8));
      expect(ms).toBeLessThanOrEqual(Math.round(666 * 1.2));
      expect(Number.isInteger(ms)).toBe(true);
    }
  });
});
