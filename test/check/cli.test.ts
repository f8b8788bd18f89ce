/** Flags, exit codes, inputs and policies of `check`, in-process. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECK_FLAGS } from '../../src/check/options.js';
import { RULE_FLAGS } from '../../src/config/rule-settings.js';
import { check, MANIFESTS, RANGES } from './support.js';

const VALID = 'manifests/nested/deeper/valid.yml';

describe('exit codes', () => {
  it('0 when no Gateway violates a rule', async () => {
    const r = await check(['-f', VALID, ...RANGES]);
    expect(r).toEqual({
      code: 0,
      stdout: 'checked 1 Gateway in 1 file: 0 violations, 0 warnings\n',
      stderr: '',
    });
  });

  it('1 when a Gateway violates a rule', async () => {
    const r = await check(['-f', 'manifests/gateways.yaml', ...RANGES]);
    expect(r.code).toBe(1);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(
      'checked 2 Gateways in 1 file: 4 violations, 0 warnings; skipped 4 other documents',
    );
  });

  it('2 for broken YAML, after checking every other file, and 2 wins over violations', async () => {
    const r = await check(['-f', 'manifests/broken.yaml', '-f', 'manifests/gateways.yaml', ...RANGES]);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('manifests/broken.yaml:24:6: error: invalid YAML:');
    expect(r.stdout).toContain('manifests/gateways.yaml:66:14: Gateway apps/internal:');
  });

  it('2 for a missing path, reported with the other inputs still checked', async () => {
    const r = await check(['-f', 'manifests/nope.yaml', '-f', VALID, ...RANGES]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe(
      'manifests/nope.yaml: error: no such file or directory\n' +
        'checked 1 Gateway in 1 file: 0 violations, 0 warnings; 1 input error\n',
    );
  });

  it('2 for a document that is not an object (reported, not thrown)', async () => {
    const r = await check(['-f', 'manifests/not-an-object.yaml', ...RANGES]);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(
      'manifests/not-an-object.yaml:4:1: error: document 2 is a sequence, not a Kubernetes object',
    );
  });

  it('0 for a file of empty documents', async () => {
    const r = await check(['-f', 'manifests/empty.yaml', ...RANGES]);
    expect(r).toMatchObject({
      code: 0,
      stdout: 'checked 0 Gateways in 1 file: 0 violations, 0 warnings; skipped 3 other documents (3 empty)\n',
    });
  });
});

describe('usage errors exit 2 with a message on stderr', () => {
  const cases: [string, string[], RegExp][] = [
    ['no input', [...RANGES], /no input: give PATH or -f PATH/],
    [
      'no ranges',
      ['-f', VALID],
      /--service-cidr CIDR \(or ROUTABILITY_WEBHOOK_SERVICE_CIDR\), or --from-cluster/,
    ],
    ['a bad CIDR', ['-f', VALID, '--service-cidr', '10.96.0.1/12'], /--service-cidr:/],
    ['an unknown flag', ['-f', VALID, ...RANGES, '--bogus'], /Unknown option '--bogus'/],
    [
      'an unknown format',
      ['-f', VALID, ...RANGES, '-o', 'xml'],
      /--output: must be one of text, json, github, junit, sarif/,
    ],
    [
      'a bad policy',
      ['-f', VALID, ...RANGES, '--spec-policy', 'deny'],
      /--spec-policy: must be one of enforce, warn/,
    ],
    [
      'an unknown --fail-on',
      ['-f', VALID, ...RANGES, '--fail-on', 'error'],
      /--fail-on: must be one of violation, warning/,
    ],
    [
      '--kubeconfig without --from-cluster',
      ['-f', VALID, ...RANGES, '--kubeconfig', 'x'],
      /--kubeconfig needs --from-cluster/,
    ],
  ];
  for (const [name, argv, message] of cases) {
    it(name, async () => {
      const r = await check(argv);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/check --help/);
    });
  }

  it('--from-cluster against an unreachable cluster is exit 2 without a usage hint', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'check-kubeconfig-'));
    try {
      const kubeconfig = join(dir, 'config');
      writeFileSync(
        kubeconfig,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
          'users: [{name: u, user: {token: t}}]',
          'contexts: [{name: x, context: {cluster: c, user: u}}]',
          'current-context: x',
        ].join('\n'),
      );
      const r = await check(['-f', VALID, '--from-cluster', '--kubeconfig', kubeconfig]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^routability-webhook check: --from-cluster: /);
      expect(r.stderr).not.toMatch(/--help/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('--help', () => {
  it('prints every flag, the rule flags serve takes included, and exits 0', async () => {
    const r = await check(['--help']);
    expect(r.code).toBe(0);
    for (const [name, def] of Object.entries(CHECK_FLAGS)) {
      expect(r.stdout).toContain(`--${name}`);
      if ('short' in def) expect(r.stdout).toContain(`-${def.short}, --${name}`);
    }
    for (const name of Object.keys(RULE_FLAGS)) expect(CHECK_FLAGS).toHaveProperty(name);
    expect(r.stdout).toMatch(
      /Exit status: 0 no violations; 1 violations \(with --fail-on warning: also warnings\); 2 usage error/,
    );
  });

  it('-h needs no inputs or ranges', async () => {
    expect((await check(['-h'])).code).toBe(0);
  });
});

describe('inputs', () => {
  it('reads standard input with -f - (helm template … | check -f -)', async () => {
    const stdin = `---\n# Source: chart/templates/gw.yaml\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: piped\n  namespace: ci\nspec:\n  addresses:\n    - value: 10.96.0.1\n      routability: External\n`;
    const r = await check(['-f', '-', ...RANGES], { stdin });
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')[0]).toBe(
      '<stdin>:10:14: Gateway ci/piped: spec.addresses[0].value: Invalid value: "10.96.0.1": routability External requires an address outside the service range (10.96.0.0/12); use routability Cluster for a ClusterIP',
    );
  });

  it('walks folders recursively for .yaml, .yml and .json only, in name order, each file once', async () => {
    const r = await check([
      '-f',
      'manifests/nested',
      '-f',
      'manifests/nested/deeper/valid.yml',
      ...RANGES,
      '-o',
      'json',
    ]);
    const report = JSON.parse(r.stdout);
    expect(report.files.map((f: { path: string }) => f.path)).toEqual([
      'manifests/nested/deeper/deployment.yml',
      'manifests/nested/deeper/valid.yml',
    ]);
    expect(r.code).toBe(0);
  });

  it('comma-separated -f values work as in kubectl', async () => {
    const r = await check(['-f', 'manifests/empty.yaml,manifests/nested', ...RANGES]);
    expect(r.stdout).toMatch(/checked 1 Gateway in 3 files/);
  });

  it('shows paths outside the working directory as absolute', async () => {
    // A fresh folder is never an ancestor of the repository, wherever the clone lives (even under /tmp).
    const elsewhere = mkdtempSync(join(tmpdir(), 'rw-cwd-'));
    const r = await check(['-f', join(MANIFESTS, 'v1beta1.yaml'), ...RANGES], { cwd: elsewhere });
    expect(r.stdout.startsWith(`${join(MANIFESTS, 'v1beta1.yaml')}:14:33: Gateway old/legacy:`)).toBe(true);
  });

  it('reads the rule flags from the environment like serve does', async () => {
    const r = await check(['-f', VALID], { env: { ROUTABILITY_WEBHOOK_SERVICE_CIDR: '10.96.0.0/12' } });
    expect(r.code).toBe(0);
  });
});

describe('policies', () => {
  it('status findings are warnings by default and violations under --status-policy enforce', async () => {
    const warn = await check(['-f', 'manifests/status.yaml', ...RANGES]);
    expect(warn.code).toBe(0);
    expect(warn.stdout).toMatch(/5 warnings/);
    const enforce = await check(['-f', 'manifests/status.yaml', ...RANGES, '--status-policy', 'enforce']);
    expect(enforce.code).toBe(1);
    // StatusDefaultedExternal is a warning-only rule: it never becomes a violation.
    expect(enforce.stdout.trimEnd().split('\n').at(-1)).toBe(
      'checked 1 Gateway in 1 file: 4 violations, 1 warning',
    );
  });

  it('--spec-policy warn turns spec violations into warnings, but a malformed routability stays denied', async () => {
    const r = await check(['-f', 'manifests/gateways.yaml', ...RANGES, '--spec-policy', 'warn']);
    // `routability: cluster` is invalid data (the CRD refuses it too): denied under every policy.
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/1 violation, 3 warnings/);
    expect(r.stdout).toMatch(/^manifests\/gateways.yaml:66:14: warning: Gateway apps\/internal:/m);
  });

  it('--allowed-routability applies to domain-prefixed values', async () => {
    const stdin =
      'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec:\n  addresses:\n  - {value: 198.51.100.1, routability: example.com/Partner}\n';
    const open = await check(['-f', '-', ...RANGES], { stdin });
    expect(open.code).toBe(0);
    const restricted = await check(['-f', '-', ...RANGES, '--allowed-routability', 'example.com/CorpWan'], {
      stdin,
    });
    expect(restricted.code).toBe(1);
    expect(restricted.stdout).toMatch(
      /^<stdin>:6:40: Gateway g: spec.addresses\[0\].routability: Unsupported value: "example.com\/Partner"/,
    );
  });

  it('--cluster-domain changes the hostname rule', async () => {
    const stdin =
      'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec:\n  addresses:\n  - {type: Hostname, value: gw.ns.svc.corp.internal, routability: External}\n';
    expect((await check(['-f', '-', ...RANGES], { stdin })).code).toBe(0);
    expect((await check(['-f', '-', ...RANGES, '--cluster-domain', 'corp.internal'], { stdin })).code).toBe(
      1,
    );
  });
});
