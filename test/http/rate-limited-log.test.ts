/** Cap warnings: at most one line per key and interval, each saying how many were held back since the last. */
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { rateLimitedWarn } from '../../src/http/rate-limited-log.js';

function recorder() {
  const lines: [Record<string, unknown>, string][] = [];
  const logger = {
    warn: (fields: Record<string, unknown>, message: string) => lines.push([fields, message]),
  };
  return { logger: logger as unknown as Logger, lines };
}

describe('rateLimitedWarn', () => {
  it('logs the first warning of a key, holds back the rest of the interval, then counts them', () => {
    const { logger, lines } = recorder();
    let t = 1_000;
    const warn = rateLimitedWarn(logger, 10_000, () => t);
    warn('evicted', { open: 5 }, 'connection limit reached');
    t += 9_999;
    warn('evicted', { open: 6 }, 'connection limit reached');
    warn('evicted', { open: 7 }, 'connection limit reached');
    expect(lines).toEqual([[{ open: 5 }, 'connection limit reached']]);
    t += 1; // exactly the interval since the last line
    warn('evicted', { open: 8 }, 'connection limit reached');
    expect(lines[1]).toEqual([{ open: 8, suppressed: 2 }, 'connection limit reached']);
    // The count starts again after each line; none held back, no field.
    t += 10_000;
    warn('evicted', { open: 9 }, 'connection limit reached');
    expect(lines[2]).toEqual([{ open: 9 }, 'connection limit reached']);
  });

  it('each key has its own interval', () => {
    const { logger, lines } = recorder();
    const warn = rateLimitedWarn(logger, 10_000, () => 0);
    warn('evicted', {}, 'a');
    warn('refused', {}, 'b');
    warn('evicted', {}, 'a');
    expect(lines.map(([, m]) => m)).toEqual(['a', 'b']);
  });

  it('by default: a 10 s interval on the wall clock', () => {
    const { logger, lines } = recorder();
    const warn = rateLimitedWarn(logger);
    warn('k', {}, 'm');
    warn('k', {}, 'm');
    expect(lines).toHaveLength(1);
  });
});
