import { describe, expect, it } from 'vitest';
import { envName } from '../../src/config/flags.js';
import { parseServeConfig } from '../../src/config/serve.js';

const certs = ['--tls-cert-file', 'c', '--tls-private-key-file', 'k'];

describe('serve configuration', () => {
  it('has the documented defaults', () => {
    const parsed = parseServeConfig(certs, {});
    expect(parsed.ok && parsed.value).toMatchObject({
      port: 8443,
      healthPort: 8080,
      clusterDomain: 'cluster.local',
      specPolicy: 'enforce',
      statusPolicy: 'warn',
      serviceCidrs: [],
      allowedRoutability: undefined,
      checkAllocatedIps: undefined,
      logLevel: 'info',
      shutdownTimeoutSeconds: 10,
      maxBodyBytes: 7 * 1024 * 1024,
      maxInflightBodyBytes: 8 * 1024 * 1024,
      dev: false,
    });
  });

  it('splits repeated and comma-separated lists', () => {
    const parsed = parseServeConfig(
      [...certs, '--service-cidr', '10.96.0.0/12, fd00:10:96::/112', '--service-cidr', '10.200.0.0/16'],
      {},
    );
    expect(parsed.ok && parsed.value.serviceCidrs).toEqual([
      '10.96.0.0/12',
      'fd00:10:96::/112',
      '10.200.0.0/16',
    ]);
  });

  it('reads every flag from ROUTABILITY_WEBHOOK_*, command line first', () => {
    expect(envName('status-policy')).toBe('ROUTABILITY_WEBHOOK_STATUS_POLICY');
    const env = {
      ROUTABILITY_WEBHOOK_STATUS_POLICY: 'enforce',
      ROUTABILITY_WEBHOOK_PORT: '9443',
      ROUTABILITY_WEBHOOK_CHECK_ALLOCATED_IPS: 'false',
      ROUTABILITY_WEBHOOK_ALLOWED_ROUTABILITY: 'example.com/CorpWan,example.com/Vpc',
    };
    const parsed = parseServeConfig([...certs, '--port', '10443'], env);
    expect(parsed.ok && parsed.value).toMatchObject({
      statusPolicy: 'enforce',
      port: 10443,
      checkAllocatedIps: false,
      allowedRoutability: new Set(['example.com/CorpWan', 'example.com/Vpc']),
    });
  });

  it('supports --no-check-allocated-ips', () => {
    const parsed = parseServeConfig([...certs, '--no-check-allocated-ips'], {});
    expect(parsed.ok && parsed.value.checkAllocatedIps).toBe(false);
  });

  it.each([
    [['--port', 'x'], /--port: must be a port from 0 to 65535, got "x"/],
    [['--port', '70000'], /--port: must be a port/],
    [['--port', '9000', '--health-port', '9000'], /must differ/],
    [['--cluster-domain', 'Not A Domain'], /--cluster-domain: "Not A Domain" is not a DNS domain/],
    [
      ['--allowed-routability', 'Cluster'],
      /--allowed-routability: "Cluster" is not a domain-prefixed routability/,
    ],
    [['--status-policy', 'deny'], /--status-policy: must be one of enforce, warn, got "deny"/],
    [['--tls-cert-file', 'only'], /must be given together/],
  ])('refuses %j', (args, reason) => {
    const parsed = parseServeConfig(args.includes('--tls-cert-file') ? args : [...certs, ...args], {});
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(reason);
  });

  it('refuses a malformed environment value, naming the variable', () => {
    const parsed = parseServeConfig(certs, { ROUTABILITY_WEBHOOK_DEV: 'maybe' });
    expect(!parsed.ok && parsed.error).toBe('ROUTABILITY_WEBHOOK_DEV: must be true or false, got "maybe"');
  });

  it('returns a frozen config', () => {
    const parsed = parseServeConfig(['--dev'], {});
    expect(parsed.ok && Object.isFrozen(parsed.value)).toBe(true);
  });
});
