/** vitest's clock for the allocated-IP lookup tests, set up once for a whole test file. */
import { afterEach, beforeEach, vi } from 'vitest';

/**
 * Fakes setTimeout, clearTimeout and Date from `t0` for every test of the
 * calling file, and takes the jitter out (`Math.random` 0.5: a factor of
 * 0.8 + 0.4 × 0.5 = 1). Restores the spy before the real timers: the other
 * order brings the fake setTimeout back for good, and in Stryker's shared
 * worker (`isolate: false`) the next file's timers would never fire.
 */
export function fakeClockAt(t0: number): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(t0);
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });
}
