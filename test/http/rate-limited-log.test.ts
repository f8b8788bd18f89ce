/** Cap warnings: at most one line per key and interval, each saying how many were held back since the last. */
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { limitedLines, rateLimitedWarn } from '../../src/http/rate-limited-log.js';

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

describe('limitedLines: a token bucket per kind', () => {
  function lines() {
    const out: [string, Record<string, unknown>, string][] = [];
    const at = (level: string) => (fields: Record<string, unknown>, message: string) =>
      void out.push([level, fields, message]);
    return { logger: { warn: at('warn'), error: at('error') } as unknown as Logger, out };
  }

  it('writes the burst, then one line per refill interval, each resumption after the count held back', () => {
    const { logger, out } = lines();
    let t = 0;
    const limited = limitedLines(logger, { burst: 3, refillMs: 1_000 }, () => t);
    for (let i = 0; i < 10; i++) limited.write('k', 'warn', { i }, 'm');
    expect(out.map(([, f]) => f['i'])).toEqual([0, 1, 2]);
    t = 999; // not yet a whole token
    limited.write('k', 'warn', { i: 10 }, 'm');
    expect(out).toHaveLength(3);
    t = 1_000;
    limited.write('k', 'warn', { i: 11 }, 'm');
    expect(out.slice(3)).toEqual([
      ['warn', { kind: 'k', suppressed: 8 }, '8 lines suppressed'],
      ['warn', { i: 11 }, 'm'],
    ]);
    // Refilled for 10 s: the burst again, never more than the burst.
    t = 11_000;
    for (let i = 0; i < 5; i++) limited.write('k', 'warn', { i: 20 + i }, 'm');
    expect(out.slice(5).map(([, f]) => f['i'] ?? `held ${String(f['suppressed'])}`)).toEqual([20, 21, 22]);
  });

  it('each kind has its own bucket and level; flush reports what is held back once', () => {
    const { logger, out } = lines();
    const limited = limitedLines(logger, { burst: 1, refillMs: 1_000 }, () => 0);
    limited.write('a', 'warn', {}, 'a');
    limited.write('a', 'warn', {}, 'a');
    limited.write('b', 'error', {}, 'b');
    limited.write('b', 'error', {}, 'b');
    limited.write('b', 'error', {}, 'b');
    limited.flush();
    limited.flush();
    expect(out).toEqual([
      ['warn', {}, 'a'],
      ['error', {}, 'b'],
      ['warn', { kind: 'a', suppressed: 1 }, '1 lines suppressed'],
      ['error', { kind: 'b', suppressed: 2 }, '2 lines suppressed'],
    ]);
  });

  it('a clock that steps back refills nothing and takes nothing: it refills from there', () => {
    const { logger, out } = lines();
    let t = 10_000;
    const limited = limitedLines(logger, { burst: 1, refillMs: 1_000 }, () => t);
    limited.write('k', 'warn', {}, 'm');
    t = 0;
    limited.write('k', 'warn', {}, 'm');
    t = 999;
    limited.write('k', 'warn', {}, 'm');
    expect(out).toHaveLength(1);
    t = 1_000;
    limited.write('k', 'warn', { again: true }, 'm');
    expect(out.slice(1)).toEqual([
      ['warn', { kind: 'k', suppressed: 2 }, '2 lines suppressed'],
      ['warn', { again: true }, 'm'],
    ]);
  });

  it('by default: ten lines at once on the wall clock', () => {
    const { logger, out } = lines();
    const limited = limitedLines(logger);
    for (let i = 0; i < 20; i++) limited.write('k', 'warn', {}, 'm');
    expect(out).toHaveLength(10);
  });
});
