/**
 * `--output sarif`: every shape the log takes (violations, warnings only, a clean run, unreadable
 * input; the audit's) is valid SARIF 2.1.0 by the OASIS committee's schema, read from the
 * package that ships it (docs/dev/decisions.md says which and why); results sit exactly where the
 * text output puts them; fingerprints survive unrelated edits.
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ajvDraft04 from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import { AUDIT_FORMATTERS, type AuditReport } from '../../src/audit/format.js';
import { artifactUri, FINGERPRINT_KEY, helpUri, PROJECT_URI } from '../../src/findings/sarif.js';
import { RULE_CODES } from '../../src/rules/index.js';
import { check, MANIFESTS, RANGES, REPO } from '../check/support.js';

const SCHEMA = join(
  REPO,
  'node_modules',
  '@microsoft',
  'jest-sarif',
  'lib',
  'schemas',
  'sarif-2.1.0-rtm.5.json',
);
// rtm.5's `language` pattern (`…{2}]?$`) is valid only as a non-Unicode regular expression (the errata fixed it).
// Both packages are CommonJS; their classes are `default` of the module object.
const ajv = new ajvDraft04.default({ strict: false, allErrors: true, unicodeRegExp: false });
ajvFormats.default(ajv);
const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA, 'utf8')) as object);
const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

interface Region {
  startLine: number;
  startColumn: number;
}
interface Location {
  physicalLocation?: { artifactLocation: { uri: string }; region?: Region };
  logicalLocations: { kind: string; name: string; fullyQualifiedName: string }[];
}
interface Result {
  ruleId: string;
  ruleIndex: number;
  level: string;
  message: { text: string };
  locations: Location[];
  partialFingerprints: Record<string, string>;
}
interface Run {
  tool: { driver: { name: string; version: string; informationUri: string; rules: Rule[] } };
  invocations: {
    executionSuccessful: boolean;
    exitCode: number;
    toolExecutionNotifications?: {
      level: string;
      message: { text: string };
      descriptor: { id: string };
      locations?: Location[];
    }[];
  }[];
  results: Result[];
}
interface Rule {
  id: string;
  shortDescription: { text: string };
  fullDescription: { text: string };
  helpUri: string;
  defaultConfiguration: { level: string };
}

/** Valid by the schema, with every region anchored by a line (the errata's schema requires one). */
function expectValid(log: unknown): Run {
  const ok = validate(log);
  expect(ok, JSON.stringify(validate.errors, null, 2)).toBe(true);
  const run = (log as { runs: Run[] }).runs[0]!;
  for (const r of run.results)
    for (const l of r.locations)
      if (l.physicalLocation?.region) expect(l.physicalLocation.region.startLine).toBeGreaterThan(0);
  return run;
}

async function sarif(argv: string[], options: Parameters<typeof check>[1] = {}) {
  const r = await check([...argv, '-o', 'sarif'], options);
  // Nothing but the document on stdout: it parses whole.
  const log = JSON.parse(r.stdout) as unknown;
  return { ...r, log, run: expectValid(log) };
}

/** The text output's finding lines, rebuilt from the log: `file:line:col: [warning: ]message`. */
function asText(run: Run): string[] {
  return run.results.map((r) => {
    const p = r.locations[0]!.physicalLocation!;
    const where = `${decodeURIComponent(p.artifactLocation.uri)}:${p.region!.startLine}:${p.region!.startColumn}`;
    return `${where}: ${r.level === 'warning' ? 'warning: ' : ''}${r.message.text}`;
  });
}

async function textLines(argv: string[]): Promise<string[]> {
  const r = await check(argv);
  return r.stdout.trimEnd().split('\n').slice(0, -1);
}

const CLEAN = [
  'apiVersion: gateway.networking.k8s.io/v1',
  'kind: Gateway',
  'metadata: { name: internal, namespace: apps }',
  'spec:',
  '  gatewayClassName: example',
  '  listeners: [{ name: http, port: 80, protocol: HTTP }]',
  '  addresses:',
  '    - { type: IPAddress, value: 10.96.0.10, routability: Cluster }',
].join('\n');

const scratch = mkdtempSync(join(tmpdir(), 'sarif-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('check --output sarif', () => {
  it('the schema check can fail: a level outside none/note/warning/error is refused', async () => {
    const { log } = await sarif(['manifests/gateways.yaml', ...RANGES]);
    const bad = structuredClone(log) as { runs: Run[] };
    bad.runs[0]!.results[0]!.level = 'fatal';
    expect(validate(bad)).toBe(false);
    const noResults = structuredClone(log) as { runs: Partial<Run>[] };
    noResults.runs[0]!.tool = {} as Run['tool'];
    expect(validate(noResults)).toBe(false);
  });

  it('violations and warnings: results where the text output puts them, levels error and warning', async () => {
    const inputs = ['manifests/gateways.yaml', 'manifests/status.yaml', 'manifests/nested', ...RANGES];
    const { run, code } = await sarif(inputs);
    expect(code).toBe(1);
    expect(asText(run)).toEqual(await textLines(inputs));
    expect(new Set(run.results.map((r) => r.level))).toEqual(new Set(['error', 'warning']));
    for (const r of run.results) {
      expect(run.tool.driver.rules[r.ruleIndex]!.id).toBe(r.ruleId);
      const logical = r.locations[0]!.logicalLocations[0]!;
      expect(r.message.text).toContain(`: ${logical.name}: `);
      expect(logical.fullyQualifiedName).toMatch(/^[a-z0-9-]+\/[a-z0-9-]+\.(spec|status)\./);
    }
    expect(run.invocations[0]).toEqual({ executionSuccessful: true, exitCode: 1 });
  });

  it('warnings only: exit 0 (1 with --fail-on warning), every result a warning', async () => {
    const { run, code } = await sarif(['manifests/status.yaml', ...RANGES]);
    expect(code).toBe(0);
    expect(run.results.length).toBeGreaterThan(0);
    expect(run.results.every((r) => r.level === 'warning')).toBe(true);
    const failing = await sarif(['manifests/status.yaml', ...RANGES, '--fail-on', 'warning']);
    expect(failing.code).toBe(1);
    expect(failing.run.invocations[0]!.exitCode).toBe(1);
  });

  it('a clean run still carries results: [] and every rule', async () => {
    writeFileSync(join(scratch, 'clean.yaml'), CLEAN);
    const { run, code, stdout } = await sarif(['clean.yaml', ...RANGES], { cwd: scratch });
    expect(code).toBe(0);
    expect(stdout).toContain('"results": []');
    expect(run.results).toEqual([]);
    expect(run.tool.driver.rules.map((r) => r.id)).toEqual(RULE_CODES);
  });

  it('unreadable input: tool execution notifications, executionSuccessful false, exit 2, stdout still the log', async () => {
    const { run, code, stderr } = await sarif(['manifests/broken.yaml', 'missing.yaml', ...RANGES]);
    expect(code).toBe(2);
    const invocation = run.invocations[0]!;
    expect(invocation.executionSuccessful).toBe(false);
    expect(invocation.exitCode).toBe(2);
    const notes = invocation.toolExecutionNotifications!;
    expect(notes.map((n) => n.descriptor.id)).toEqual(['InvalidYAML', 'UnreadableInput']);
    expect(notes[1]).toEqual({
      level: 'error',
      message: { text: 'no such file or directory' },
      descriptor: { id: 'UnreadableInput' },
      locations: [{ physicalLocation: { artifactLocation: { uri: 'missing.yaml' } } }],
    });
    // The same place as the text output's error line.
    const text = await check(['manifests/broken.yaml', ...RANGES]);
    const region = notes[0]!.locations![0]!.physicalLocation!.region!;
    expect(text.stdout).toContain(
      `manifests/broken.yaml:${region.startLine}:${region.startColumn}: error: ${notes[0]!.message.text}`,
    );
    expect(stderr).toContain('missing.yaml: error: no such file or directory');
  });

  it('broken standard input: a notification without a location', async () => {
    const { run, code } = await sarif(['-', ...RANGES], { stdin: 'a: [\n' });
    expect(code).toBe(2);
    const [note] = run.invocations[0]!.toolExecutionNotifications!;
    expect(note!.descriptor.id).toBe('InvalidYAML');
    expect(note!.locations).toBeUndefined();
  });

  it('standard input: logical locations only, no file to point at', async () => {
    const yaml = readFileSync(join(MANIFESTS, 'gateways.yaml'), 'utf8');
    const { run } = await sarif(['-', ...RANGES], { stdin: yaml });
    expect(run.results.length).toBeGreaterThan(0);
    for (const r of run.results) {
      expect(r.locations[0]!.physicalLocation).toBeUndefined();
      expect(r.locations[0]!.logicalLocations).toHaveLength(1);
    }
  });

  it('one rule per catalogue code: its descriptions, level and help in docs/messages.md at this version', async () => {
    const { run } = await sarif(['manifests/gateways.yaml', ...RANGES]);
    const driver = run.tool.driver;
    expect(driver).toMatchObject({ name: 'routability-webhook', version, informationUri: PROJECT_URI });
    const doc = readFileSync(join(REPO, 'docs', 'messages.md'), 'utf8');
    for (const rule of driver.rules) {
      expect(rule.helpUri).toBe(`${PROJECT_URI}/blob/v${version}/docs/messages.md#${rule.id.toLowerCase()}`);
      // GitHub's anchor of the code's heading.
      expect(doc).toContain(`\n## ${rule.id}\n`);
      expect(rule.shortDescription.text).toMatch(/^[A-Z].*\.$/);
      expect(rule.fullDescription.text.startsWith(rule.shortDescription.text)).toBe(true);
      expect(['error', 'warning']).toContain(rule.defaultConfiguration.level);
    }
    expect(helpUri('StatusDefaultedExternal', '1.2.3')).toMatch(
      /\/blob\/v1\.2\.3\/docs\/messages\.md#statusdefaultedexternal$/,
    );
  });

  it('fingerprints: the same across runs, unchanged when unrelated lines move, distinct per finding', async () => {
    const original = readFileSync(join(MANIFESTS, 'gateways.yaml'), 'utf8');
    writeFileSync(join(scratch, 'gw.yaml'), original);
    const fingerprints = async () => {
      const { run } = await sarif(['gw.yaml', ...RANGES], { cwd: scratch });
      return {
        prints: run.results.map((r) => r.partialFingerprints[FINGERPRINT_KEY]!),
        lines: run.results.map((r) => r.locations[0]!.physicalLocation!.region!.startLine),
      };
    };
    const first = await fingerprints();
    expect(first.prints.length).toBeGreaterThan(1);
    expect(new Set(first.prints).size).toBe(first.prints.length);
    expect(await fingerprints()).toEqual(first);
    // Unrelated lines above: a comment block and another object.
    const moved = `# owners: platform\n# reviewed\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n${original}`;
    writeFileSync(join(scratch, 'gw.yaml'), moved);
    const after = await fingerprints();
    expect(after.lines).not.toEqual(first.lines);
    expect(after.prints).toEqual(first.prints);
  });

  it('paths become URI references: relative stays relative, spaces encoded, absolute as file URIs', () => {
    expect(artifactUri('deploy/my gw#1.yaml')).toBe('deploy/my%20gw%231.yaml');
    expect(artifactUri('/tmp/a b/gw.yaml')).toBe('file:///tmp/a%20b/gw.yaml');
  });
});

describe('audit --output sarif', () => {
  const finding = (severity: 'violation' | 'warning', field: string) => ({
    severity,
    check: 'spec' as const,
    code: severity === 'violation' ? 'ClusterAddressOutsideServiceRange' : 'ClusterAddressGloballyRoutable',
    field,
    message: `${field}: Invalid value: "10.0.0.5": detail`,
    warning: `${field}: compact`,
  });
  const report = (flagged: AuditReport['result']['flagged'], exitCode: number): AuditReport => ({
    settings: {
      cluster: 'https://127.0.0.1:6443',
      context: 'kind-test',
      namespace: undefined,
      serviceCidrs: ['10.96.0.0/12'],
      specPolicy: 'enforce',
      statusPolicy: 'warn',
      revision: 'provisional',
      allocatedIPs: true,
    },
    result: {
      gateways: 2,
      namespaces: 1,
      pages: 1,
      flagged,
      violations: 1,
      warnings: 1,
      byCode: [],
      audited: [],
    },
    exitCode,
  });

  it('logical locations only: the cluster object and the field', () => {
    const log = JSON.parse(
      AUDIT_FORMATTERS.sarif(
        report(
          [
            { namespace: 'apps', name: 'bad', findings: [finding('violation', 'spec.addresses[0].value')] },
            { namespace: 'apps', name: 'odd', findings: [finding('warning', 'spec.addresses[1].value')] },
          ],
          1,
        ),
      ),
    ) as unknown;
    const run = expectValid(log);
    expect(run.results.map((r) => [r.level, r.message.text.split(':')[0]])).toEqual([
      ['error', 'Gateway apps/bad'],
      ['warning', 'Gateway apps/odd'],
    ]);
    for (const r of run.results) {
      expect(r.locations[0]!.physicalLocation).toBeUndefined();
      expect(r.partialFingerprints[FINGERPRINT_KEY]).toMatch(/^[0-9a-f]{32}:1$/);
    }
    expect(run.results[0]!.locations[0]!.logicalLocations).toEqual([
      {
        kind: 'member',
        name: 'spec.addresses[0].value',
        fullyQualifiedName: 'apps/bad.spec.addresses[0].value',
      },
    ]);
    expect(run.invocations).toEqual([{ executionSuccessful: true, exitCode: 1 }]);
  });

  it('a clean audit: results: []', () => {
    const run = expectValid(JSON.parse(AUDIT_FORMATTERS.sarif(report([], 0))) as unknown);
    expect(run.results).toEqual([]);
  });
});
