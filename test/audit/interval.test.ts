import { describe, expect, it } from 'vitest';
import { parseAuditInterval } from '../../src/audit/interval.js';

describe('--audit-interval', () => {
  it.each([
    ['0', 0],
    ['10s', 10_000],
    ['90s', 90_000],
    ['5m', 300_000],
    ['24h', 86_400_000],
  ])('%s → %d ms', (text, ms) => {
    expect(parseAuditInterval(text)).toEqual({ ok: true, value: ms });
  });

  it.each(['', '5', '9s', '25h', '1d', '-5m', '5 m', '1.5h', '00'])(
    'refuses %j with the accepted forms named',
    (text) => {
      const parsed = parseAuditInterval(text);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.error).toContain('a duration from 10s to 24h');
    },
  );
});
