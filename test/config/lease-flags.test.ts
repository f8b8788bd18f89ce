import { describe, expect, it } from 'vitest';
import { parseServeConfig } from '../../src/config/serve.js';

const certs = ['--tls-cert-file', 'c', '--tls-private-key-file', 'k'];

/** The lease timing serve would run with, or the error it stops with. */
function timing(argv: string[], env: Record<string, string> = {}) {
  const parsed = parseServeConfig([...certs, ...argv], env);
  return parsed.ok ? [parsed.value.auditLeaseDurationMs, parsed.value.auditLeaseRetryPeriodMs] : parsed.error;
}

describe('--audit-lease-duration and --audit-lease-retry-period', () => {
  it("default to controller-runtime's 15 s lease renewed every 5 s", () => {
    expect(timing([])).toEqual([15_000, 5_000]);
  });

  it('read the command line before the environment', () => {
    expect(
      timing([], {
        ROUTABILITY_WEBHOOK_AUDIT_LEASE_DURATION: '30s',
        ROUTABILITY_WEBHOOK_AUDIT_LEASE_RETRY_PERIOD: '10s',
      }),
    ).toEqual([30_000, 10_000]);
    expect(
      timing(['--audit-lease-duration', '3s', '--audit-lease-retry-period', '1s'], {
        ROUTABILITY_WEBHOOK_AUDIT_LEASE_DURATION: '30s',
      }),
    ).toEqual([3_000, 1_000]);
  });

  it('accept a retry period of exactly a third of the duration, and refuse a longer one', () => {
    expect(timing(['--audit-lease-duration', '6s', '--audit-lease-retry-period', '2s'])).toEqual([
      6_000, 2_000,
    ]);
    expect(timing(['--audit-lease-duration', '6s', '--audit-lease-retry-period', '3s'])).toBe(
      '--audit-lease-retry-period (3s) must be at most a third of --audit-lease-duration (6s): the holder stops auditing when duration minus retry period has passed without a renewal, and needs two tries before that',
    );
    // The default retry period does not fit a short lease: it has to be given too.
    expect(timing(['--audit-lease-duration', '10s'])).toMatch(/^--audit-lease-retry-period \(5s\) must be/);
  });

  it.each([
    ['--audit-lease-duration', '2s', 'a duration from 3s to 5m'],
    ['--audit-lease-duration', '6m', 'a duration from 3s to 5m'],
    ['--audit-lease-duration', '0', 'a duration from 3s to 5m'],
    ['--audit-lease-duration', '1500ms', 'a duration from 3s to 5m'],
    ['--audit-lease-retry-period', '0', 'a duration from 1s to 100s'],
    ['--audit-lease-retry-period', '101s', 'a duration from 1s to 100s'],
  ])('%s %s is refused (%s)', (flag, value, range) => {
    expect(timing([flag, value])).toBe(`${flag}: "${value}" is not ${range} (e.g. 90s, 5m, 1h)`);
  });
});
