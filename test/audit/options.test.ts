/**
 * `audit`'s own flags read into options (src/audit/options.ts): the namespace
 * as an RFC 1123 label, the page size's bounds, the rule flags passed on; its
 * help text; and the audit Lease's identity (src/audit/identity.ts): the
 * downward API's pod name and namespace, else the service account's namespace
 * file and the host name, else `default`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { leaseIdentity } from '../../src/audit/identity.js';
import { AUDIT_FLAGS, AUDIT_HELP, auditOptionsFrom } from '../../src/audit/options.js';
import { commandHelp, parseFlags } from '../../src/config/flags.js';

function options(...argv: string[]) {
  const flags = parseFlags(AUDIT_FLAGS, ['--service-cidr', '10.96.0.0/12', ...argv], {});
  if (!flags.ok) throw new Error(flags.error);
  return auditOptionsFrom(flags.value.flags);
}

describe('auditOptionsFrom', () => {
  it('reads the namespace, kubeconfig, page size and output, with the rule settings', () => {
    const parsed = options('-n', 'apps', '--kubeconfig', '/k', '--page-size', '7', '--output', 'json');
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value).toMatchObject({ namespace: 'apps', kubeconfig: '/k', pageSize: 7, output: 'json' });
    expect(parsed.value.rules).toBeDefined();
  });

  it('defaults: all namespaces, no kubeconfig, 250 per page, text', () => {
    const parsed = options();
    expect(parsed.ok && parsed.value).toMatchObject({
      namespace: undefined,
      kubeconfig: undefined,
      pageSize: 250,
      output: 'text',
    });
    // An empty namespace is all namespaces too.
    const empty = options('-n', '');
    expect(empty.ok && empty.value.namespace).toBeUndefined();
  });

  it.each(['a', 'a-b', '0', 'x'.repeat(63), 'a1-2b'])('accepts the namespace %j', (ns) => {
    const parsed = options('-n', ns);
    expect(parsed.ok && parsed.value.namespace).toBe(ns);
  });

  it.each(['A', '-a', 'a-', 'a_b', 'a.b', 'x'.repeat(64), ' a'])('refuses the namespace %j', (ns) => {
    expect(options(`--namespace=${ns}`)).toEqual({
      ok: false,
      error: `--namespace: "${ns}" is not a namespace name (RFC 1123 label)`,
    });
  });

  it('bounds the page size to 1..10000', () => {
    expect(options('--page-size', '1').ok).toBe(true);
    expect(options('--page-size', '10000').ok).toBe(true);
    expect(options('--page-size', '0')).toEqual({ ok: false, error: '--page-size: 0 is outside 1..10000' });
    expect(options('--page-size', '10001')).toEqual({
      ok: false,
      error: '--page-size: 10001 is outside 1..10000',
    });
  });

  it("passes on the rule flags' own errors", () => {
    const flags = parseFlags(AUDIT_FLAGS, ['--service-cidr', 'nonsense'], {});
    expect(flags.ok).toBe(true);
    const parsed = flags.ok ? auditOptionsFrom(flags.value.flags) : undefined;
    expect(parsed?.ok).toBe(false);
  });
});

const auditHelp = (): string => commandHelp('audit', AUDIT_FLAGS, AUDIT_HELP);

describe('audit --help', () => {
  it('starts with the usage line, lists every flag and ends with the exit statuses and the guide', () => {
    const lines = auditHelp().split('\n');
    expect(lines[0]).toBe('Usage: routability-webhook audit [-n NAMESPACE] [--service-cidr CIDR] [flags]');
    expect(lines[1]).toBe('');
    expect(lines).toContain('Flags:');
    for (const flag of Object.keys(AUDIT_FLAGS)) expect(auditHelp()).toContain(`--${flag}`);
    expect(lines.slice(-3)).toEqual([
      '',
      'Exit status: 0 no violations; 1 violations; 2 usage error, or the cluster could not be read.',
      'See docs/audit.md for the rollout guide and the JSON report.',
    ]);
    expect(lines.slice(2, 7)).toEqual([
      "Judges the Gateways stored in the cluster with the webhook's own rules, as serve would judge",
      'a write of them: spec as a CREATE, status as a status update. Service ranges, allocated',
      'ClusterIPs and the GEP revision are read from the cluster, as `check --from-cluster` does.',
      '',
      'Flags:',
    ]);
    // Flags name their environment variable as `[env …]`, with their value's name.
    expect(auditHelp()).toContain('[env ROUTABILITY_WEBHOOK_PAGE_SIZE]');
    expect(auditHelp()).toContain(
      'Report format: text, json (versioned), github (workflow annotations), junit (XML), sarif (SARIF 2.1.0, logical locations).',
    );
    expect(auditHelp()).toContain('Gateways per list request (limit/continue)');
  });
});

describe('leaseIdentity', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lease-identity-'));
  const file = join(dir, 'namespace');
  writeFileSync(file, ' webhooks\n');
  const missing = join(dir, 'absent');

  it("takes the downward API's pod name and namespace first", () => {
    expect(leaseIdentity({ POD_NAME: 'pod-1', POD_NAMESPACE: 'ns-1' }, file)).toEqual({
      identity: 'pod-1',
      namespace: 'ns-1',
    });
  });

  it("else the service account's namespace file (trimmed) and the host name", () => {
    expect(leaseIdentity({}, file)).toEqual({ identity: hostname(), namespace: 'webhooks' });
    expect(leaseIdentity({ POD_NAME: '', POD_NAMESPACE: '' }, file)).toEqual({
      identity: hostname(),
      namespace: 'webhooks',
    });
  });

  it('else default', () => {
    expect(leaseIdentity({}, missing)).toEqual({ identity: hostname(), namespace: 'default' });
    const blank = join(dir, 'blank');
    writeFileSync(blank, '\n');
    expect(leaseIdentity({}, blank).namespace).toBe('default');
  });
});
