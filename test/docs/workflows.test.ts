/**
 * The GitHub Actions workflows are valid (action-validator checks them against the workflow
 * schema, offline), and the release workflow's own shell steps do what docs/install-reference.md says.
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

  /** A step's shell, run from the repository root as the runner runs it, with GITHUB_OUTPUT. */
  async function step(job: string, name: string, env: Record<string, string>) {
    const found = workflow.jobs[job].steps.find((s: { name?: string }) => s.name === name);
    const dir = mkdtempSync(join(tmpdir(), 'workflow-'));
    try {
      const output = join(dir, 'out');
      writeFileSync(output, '');
      const r = await run('bash', ['-ec', found.run], { ...process.env, GITHUB_OUTPUT: output, ...env });
      return { ...r, output: readFileSync(output, 'utf8') };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const OWNER = 'Gateway-Routability-Webhook';
  const image = 'ghcr.io/gateway-routability-webhook/gateway-routability-webhook';

  it("tags the image X.Y.Z and X.Y under the chart's image.repository, as docs/install-reference.md says", async () => {
    const tags = await step('image', 'Tags', {
      GITHUB_REF_NAME: `v${chartVersion}`,
      GITHUB_REPOSITORY_OWNER: OWNER,
    });
    expect(tags.code, tags.out).toBe(0);
    const minor = chartVersion.split('.').slice(0, 2).join('.');
    expect(tags.output).toContain(`tags=${image}:${chartVersion},${image}:${minor}\n`);
    const charts = await step('chart', 'Coordinates', {
      GITHUB_REF_NAME: `v${chartVersion}`,
      GITHUB_REPOSITORY_OWNER: OWNER,
    });
    expect(charts.output).toContain('charts=oci://ghcr.io/gateway-routability-webhook/charts\n');
    expect(JSON.stringify(workflow.jobs.chart.steps)).toContain('${{ steps.coordinates.outputs.charts }}');
    expect(JSON.stringify(workflow.jobs.image.steps)).toContain('${{ steps.tags.outputs.tags }}');
    const install = readFileSync(join(REPO, 'docs', 'install-reference.md'), 'utf8').replace(/\s+/g, ' ');
    expect(install).toContain(`pushes it to \`${image}\` with the tags \`X.Y.Z\` and \`X.Y\``);
  });

  it('refuses a tag that is not the version, and an image its owner cannot push', async () => {
    const check = (tag: string, owner = OWNER) =>
      step('test', 'Release coordinates', { GITHUB_REF_NAME: tag, GITHUB_REPOSITORY_OWNER: owner });
    expect((await check(`v${chartVersion}`)).code).toBe(0);
    const wrong = await check('v99.0.0');
    expect(wrong.code).toBe(1);
    expect(wrong.out).toContain(`::error::tag v99.0.0 but the version is ${chartVersion}`);
    const fork = await check(`v${chartVersion}`, 'someone-else');
    expect(fork.code).toBe(1);
    expect(fork.out).toContain('set it to ghcr.io/someone-else/gateway-routability-webhook');
    expect(
      (await step('image', 'Tags', { GITHUB_REF_NAME: 'v99.0.0', GITHUB_REPOSITORY_OWNER: OWNER })).code,
    ).toBe(1);
  });
});
