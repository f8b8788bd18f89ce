import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/config/flags.js';
import { parseServeConfig, SERVE_FLAGS } from '../../src/config/serve.js';

/** The flag's text as serve reads it: a `duration` flag with the bounds its declaration gives. */
const parseAuditInterval = (text: string) =>
  parseDuration(text, SERVE_FLAGS['audit-interval'], '--audit-interval');

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

describe('--audit-interval as serve reads it (a duration flag)', () => {
  const certs = ['--tls-cert-file', 'c', '--tls-private-key-file', 'k'];
  const intervalOf = (argv: string[], env: Record<string, string> = {}) => {
    const parsed = parseServeConfig([...certs, ...argv], env);
    return parsed.ok ? parsed.value.auditIntervalMs : parsed.error;
  };

  it('defaults to 5m, and reads the command line before the environment', () => {
    expect(intervalOf([])).toBe(300_000);
    expect(intervalOf([], { ROUTABILITY_WEBHOOK_AUDIT_INTERVAL: '0' })).toBe(0);
    expect(intervalOf(['--audit-interval', '1h'], { ROUTABILITY_WEBHOOK_AUDIT_INTERVAL: '0' })).toBe(
      3_600_000,
    );
  });

  it('refuses a bad value from either source, naming the flag', () => {
    const error = '--audit-interval: "9s" is not 0 (off) or a duration from 10s to 24h (e.g. 90s, 5m, 1h)';
    expect(intervalOf(['--audit-interval', '9s'])).toBe(error);
    expect(intervalOf([], { ROUTABILITY_WEBHOOK_AUDIT_INTERVAL: '9s' })).toBe(error);
  });
});
