/**
 * The GitHub Actions workflows are valid (action-validator checks them against the workflow
 * schema, offline), and the release workflow's own shell steps do what docs/install.md says.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO } from './markdown.js';

const WORKFLOWS = join(REPO, '.github', 'workflows');
const VALIDATOR = join(REPO, 'node_modules', '@action-validator', 'cli', 'cli.mjs');
const files = readdirSync(WORKFLOWS).filter((f) => /\.ya?ml$/.test(f));

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ code: number; out: string }>((resolve) =>
    execFile(cmd, args, { env, cwd: REPO, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr }),
    ),
  );
}

const validate = (file: string) => run(process.execPath, [VALIDATOR, file]);

describe('GitHub Actions workflows', () => {
  it('include the release workflow', () => {
    expect(files).toContain('release.yml');
  });

  it.each(files)('%s passes action-validator', async (file) => {
    const r = await validate(join(WORKFLOWS, file));
    expect(r.code, r.out).toBe(0);
  });

  it('action-validator rejects a broken workflow (the lint can fail)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'workflow-'));
    try {
      writeFileSync(
        join(dir, 'bad.yml'),
        'on: push\njobs:\n  a:\n    runs-onn: ubuntu-24.04\n    steps:\n      - run: true\n',
      );
      expect((await validate(join(dir, 'bad.yml'))).code).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('release.yml', () => {
  const workflow = parse(readFileSync(join(WORKFLOWS, 'release.yml'), 'utf8'));
  const chart = readFileSync(join(REPO, 'charts', 'gateway-routability-webhook', 'Chart.yaml'), 'utf8');
  const chartVersion = /^version: *(\S+)/m.exec(chart)![1]!;

  it('runs on version tags only, builds the image and pushes the chart', () => {
    expect(Object.keys(workflow.on)).toEqual(['push']);
    expect(workflow.on.push.tags).toEqual(['v*.*.*']);
    const steps = (job: string) => JSON.stringify(workflow.jobs[job].steps);
    expect(steps('test')).toContain('bash .ci/run');
    expect(steps('image')).toContain('docker/build-push-action');
    expect(steps('chart')).toContain('helm push');
    expect(workflow.jobs.image.needs).toBe('test');
    expect(workflow.jobs.chart.needs).toBe('image');
  });

  it('tags the image X.Y.Z and X.Y under the lower-cased owner, as docs/install.md says', async () => {
    const step = workflow.jobs.image.steps.find((s: { name?: string }) => s.name === 'Tags');
    const dir = mkdtempSync(join(tmpdir(), 'workflow-'));
    try {
      const output = join(dir, 'out');
      writeFileSync(output, '');
      const env = {
        ...process.env,
        GITHUB_REF_NAME: 'v1.2.3',
        GITHUB_REPOSITORY_OWNER: 'Some-Org',
        GITHUB_OUTPUT: output,
      };
      expect((await run('bash', ['-ec', step.run], env)).code).toBe(0);
      const image = 'ghcr.io/some-org/gateway-routability-webhook';
      expect(readFileSync(output, 'utf8')).toBe(`tags=${image}:1.2.3,${image}:1.2\n`);
      const install = readFileSync(join(REPO, 'docs', 'install.md'), 'utf8');
      expect(install).toContain(
        'pushes it to `ghcr.io/<owner>/gateway-routability-webhook` with the tags\n`X.Y.Z` and `X.Y`',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a tag that does not match the chart version and appVersion', async () => {
    const step = workflow.jobs.test.steps.find((s: { name?: string }) => s.name === 'Tag matches the chart');
    const check = (tag: string) => run('bash', ['-ec', step.run], { ...process.env, GITHUB_REF_NAME: tag });
    expect((await check(`v${chartVersion}`)).code).toBe(0);
    const wrong = await check('v99.0.0');
    expect(wrong.code).toBe(1);
    expect(wrong.out).toContain(`Chart.yaml has version ${chartVersion}`);
  });
});
