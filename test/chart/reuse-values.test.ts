// `helm upgrade --reuse-values` from every earlier version of the chart: Helm then renders today's
// templates with the old release's values alone (the old chart's defaults plus what the user set; the
// new values.yaml is not merged in). Every template must give a value an earlier values.yaml lacks a
// default, and the server must accept every argument the chart then renders.
//
// The earlier values.yaml files come from test/fixtures/chart-values-history/ (copied out of git
// history by scripts/chart-values-history.mjs, so the test runs without .git) and, in a git checkout,
// from the history itself (so a version not yet copied is covered too).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseServeConfig } from '../../src/config/serve.js';
import {
  chartDir,
  helm,
  helmBinary,
  NAMESPACE,
  parseManifests,
  RELEASE,
  repoRoot,
  type K8sObject,
} from './helm.js';

const { skipReason } = helmBinary();
const VALUES = 'charts/gateway-routability-webhook/values.yaml';
const FIXTURES = join(repoRoot, 'test', 'fixtures', 'chart-values-history');
/** Values that differ only in comments or layout render the same: compared as parsed. */
const digest = (text: string): string =>
  createHash('sha256')
    .update(JSON.stringify(parse(text)))
    .digest('hex');

/** Every distinct earlier values.yaml: the fixtures, and git history when there is one. */
function earlierValues(): { name: string; text: string }[] {
  const current = digest(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));
  const found = new Map<string, { name: string; text: string }>();
  const add = (name: string, text: string): void => {
    const sum = digest(text);
    if (sum !== current && !found.has(sum)) found.set(sum, { name, text });
  };
  for (const file of readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.yaml'))
    .sort())
    add(file, readFileSync(join(FIXTURES, file), 'utf8'));
  if (existsSync(join(repoRoot, '.git'))) {
    const git = (...args: string[]): string =>
      execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 << 20 });
    for (const commit of git('log', '--format=%H', '--', VALUES).split('\n').filter(Boolean)) {
      try {
        add(`git ${commit.slice(0, 12)}`, git('show', `${commit}:${VALUES}`));
      } catch {
        // a commit that deleted the file
      }
    }
  }
  return [...found.values()];
}

const work = mkdtempSync(join(tmpdir(), 'reuse-values-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let copies = 0;

/** Today's templates and schema with `values` as the chart's values: what --reuse-values renders. */
async function renderReused(
  values: string,
  extra: string[] = [],
): Promise<{ code: number; stderr: string; docs: K8sObject[] }> {
  const dir = join(work, `chart-${++copies}`);
  cpSync(chartDir, dir, { recursive: true });
  writeFileSync(join(dir, 'values.yaml'), values);
  const r = await helm(['template', RELEASE, dir, '--namespace', NAMESPACE, ...extra]);
  return { code: r.code, stderr: r.stderr, docs: r.code === 0 ? parseManifests(r.stdout) : [] };
}

/** The toggles of an old values file that turn on more templates (as `--reuse-values --set` would). */
function everythingOn(values: string): string[] {
  const v = parse(values) as Record<string, Record<string, Record<string, unknown>>>;
  const sets: string[] = [];
  const on = (path: string, present: unknown): void => {
    if (present !== undefined) sets.push('--set', `${path}=true`);
  };
  on('metrics.serviceMonitor.enabled', v['metrics']?.['serviceMonitor']);
  on('metrics.prometheusRule.enabled', v['metrics']?.['prometheusRule']);
  on('metrics.grafanaDashboard.enabled', v['metrics']?.['grafanaDashboard']);
  on('crdPatch.enabled', v['crdPatch']);
  on('policy.enabled', v['policy']);
  return sets;
}

function serveArgs(docs: K8sObject[]): string[] {
  const deployment = docs.find((d) => d.kind === 'Deployment');
  if (!deployment) throw new Error('no Deployment rendered');
  const args = deployment.spec.template.spec.containers[0].args as string[];
  expect(args[0]).toBe('serve');
  return args.slice(1);
}

const versions = earlierValues();

describe.skipIf(skipReason !== undefined)('helm upgrade --reuse-values from an earlier chart', () => {
  it('finds the earlier versions (fixtures and history)', () => {
    expect(versions.length).toBeGreaterThanOrEqual(8);
  });

  describe.each(versions.map((v) => [v.name, v] as const))('%s', (_name, version) => {
    it.each([
      ['its values alone', [] as string[]],
      ['with every optional part switched on', everythingOn(version.text)],
    ])(
      "%s: today's templates render, and serve accepts the arguments",
      async (_what, extra) => {
        const rendered = await renderReused(version.text, extra);
        expect(rendered.stderr, 'helm template').not.toMatch(/Error/);
        expect(rendered.code).toBe(0);
        const args = serveArgs(rendered.docs);
        expect(
          args.filter((a) => /^--[a-z-]+=$/.test(a)),
          'flags rendered with no value',
        ).toEqual([]);
        const parsed = parseServeConfig(args, {});
        if (!parsed.ok) throw new Error(`serve refuses the rendered arguments: ${parsed.error}`);
      },
      60_000,
    );
  });

  it('a value missing from the old release takes its default; one it set (false, empty) stays', async () => {
    const oldest = parse(
      readFileSync(
        join(
          FIXTURES,
          readdirSync(FIXTURES)
            .filter((f) => f.endsWith('.yaml'))
            .sort()[0]!,
        ),
        'utf8',
      ),
    ) as { webhook: Record<string, unknown> };
    expect(oldest.webhook['audit'], 'the first chart had no audit values').toBeUndefined();
    oldest.webhook['checkAllocatedIPs'] = false;
    oldest.webhook['serviceCIDRs'] = ['10.96.0.0/12'];
    const rendered = await renderReused(stringify(oldest));
    expect(rendered.stderr).toBe('');
    const args = serveArgs(rendered.docs);
    expect(args).toContain('--no-check-allocated-ips');
    expect(args).toContain('--service-cidr=10.96.0.0/12');
    for (const filled of [
      '--audit-interval=5m',
      '--audit-lease-duration=15s',
      '--audit-lease-retry-period=5s',
      '--audit-reports=none',
      '--gep-revision=auto',
      '--max-connections=1000',
      '--max-inflight-body-bytes=8388608',
    ])
      expect(args).toContain(filled);
  });
});

describe('the defaults the templates fill in', () => {
  it('files/values-defaults.yaml is values.yaml (else: node scripts/chart-values-history.mjs)', () => {
    const defaults = parse(readFileSync(join(chartDir, 'files', 'values-defaults.yaml'), 'utf8')) as unknown;
    expect(defaults).toEqual(parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')));
  });

  it('every template fills them in before it reads a value', () => {
    const dir = join(chartDir, 'templates');
    const files = (readdirSync(dir, { recursive: true }) as string[])
      .filter((f) => !basename(f).startsWith('_') && /\.(yaml|txt)$/.test(f))
      .sort();
    expect(files).toContain('deployment.yaml');
    const missing = files.filter(
      (f) => readFileSync(join(dir, f), 'utf8').split('\n')[0] !== '{{- include "grw.defaults" . }}',
    );
    expect(missing, 'templates whose first line is not {{- include "grw.defaults" . }}').toEqual([]);
  });
});
