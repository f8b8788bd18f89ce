/**
 * action.yml, run as the runner runs a composite action: its shell steps in order with bash,
 * `${{ … }}` filled from the inputs, `github.action_path` a copy of this repository (the files
 * git would check out), GITHUB_PATH and GITHUB_OUTPUT honoured between steps, and each step's
 * `if:` decided. The upload step is GitHub's own action: checked for its pin and its input.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  type Dirent,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const REPO = join(import.meta.dirname, '..', '..');
const text = readFileSync(join(REPO, 'action.yml'), 'utf8');

interface Step {
  name: string;
  id?: string;
  if?: string;
  shell?: string;
  run?: string;
  uses?: string;
  with?: Record<string, string>;
  env?: Record<string, string>;
  'working-directory'?: string;
}
interface Action {
  inputs: Record<string, { required?: boolean; default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}
const action = parse(text) as Action;

function sh(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }) {
  return new Promise<{ code: number; out: string }>((resolve) =>
    execFile(cmd, args, { ...opts, timeout: 1_000_000, maxBuffer: 32 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr }),
    ),
  );
}

const scratch = mkdtempSync(join(tmpdir(), 'action-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }), 300_000);
const actionPath = join(scratch, 'action');
const runnerTemp = join(scratch, 'runner-temp');
const githubPath = join(scratch, 'github-path');

interface Job {
  inputs: Record<string, string>;
  outputs: Record<string, Record<string, string>>;
  path: string[];
}

/** `${{ inputs.x }}`, `${{ github.action_path }}`, `${{ steps.id.outputs.x }}`: all this action uses. */
function expand(value: string, job: Job): string {
  return value.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => evaluate(expr, job));
}

function evaluate(expr: string, job: Job): string {
  if (expr === 'github.action_path') return actionPath;
  let m = /^inputs\.([\w-]+)$/.exec(expr);
  if (m) return job.inputs[m[1]!] ?? action.inputs[m[1]!]?.default ?? '';
  m = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
  if (m) return job.outputs[m[1]!]?.[m[2]!] ?? '';
  throw new Error(`expression the test does not know: ${expr}`);
}

/** The conditions this action writes: `always()` and comparisons joined by &&. */
function condition(expr: string | undefined, job: Job): boolean {
  if (expr === undefined) return true;
  return expr.split('&&').every((part) => {
    const p = part.trim();
    if (p === 'always()') return true;
    const m = /^(\S+) (==|!=) '([^']*)'$/.exec(p);
    if (!m) throw new Error(`condition the test does not know: ${p}`);
    const value = evaluate(m[1]!, job);
    return m[2] === '==' ? value === m[3] : value !== m[3];
  });
}

/** Runs the shell steps from `workspace`; returns what each did (undefined: skipped by its if). */
async function runSteps(steps: Step[], workspace: string, job: Job) {
  const done: Record<string, { code: number; out: string } | undefined> = {};
  for (const step of steps) {
    if (!condition(step.if, job) || step.run === undefined) {
      done[step.name] = undefined;
      continue;
    }
    const outputFile = join(scratch, `output-${Object.keys(done).length}`);
    writeFileSync(outputFile, '');
    writeFileSync(githubPath, '');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(String(v), job)])),
      PATH: [...job.path, process.env['PATH']].join(':'),
      RUNNER_TEMP: runnerTemp,
      GITHUB_OUTPUT: outputFile,
      GITHUB_PATH: githubPath,
      GITHUB_ACTION_PATH: actionPath,
    };
    const cwd = step['working-directory'] ? expand(step['working-directory'], job) : workspace;
    expect(step.shell).toBe('bash');
    // The runner's bash: `bash --noprofile --norc -eo pipefail {0}`.
    const r = await sh('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run], { cwd, env });
    done[step.name] = r;
    job.path.unshift(...readFileSync(githubPath, 'utf8').split('\n').filter(Boolean).reverse());
    if (step.id)
      job.outputs[step.id] = Object.fromEntries(
        readFileSync(outputFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
  }
  return done;
}

/** What .gitignore leaves out of a checkout, for a copy of the repository that is not a git work tree. */
const GENERATED = new Set(['.git', 'node_modules', 'dist', 'coverage', '.cache']);

/**
 * The files a checkout of this repository has: tracked ones and new ones git does not ignore. A copy
 * without .git (CI's `git archive` run, a release tarball) has only those and what npm and the build
 * made, which GENERATED names.
 */
async function repositoryFiles(): Promise<string[]> {
  if (!existsSync(join(REPO, '.git'))) {
    return (readdirSync(REPO, { recursive: true, withFileTypes: true }) as Dirent[])
      .filter((d) => d.isFile())
      .map((d) => relative(REPO, join(d.parentPath, d.name)))
      .filter((file) => !file.split(sep).some((part) => GENERATED.has(part)));
  }
  const listed = await sh('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO,
    env: process.env,
  });
  expect(listed.code, listed.out).toBe(0);
  return listed.out.split('\0').filter(Boolean);
}

async function copyRepository(to: string) {
  for (const file of await repositoryFiles()) {
    if (!existsSync(join(REPO, file))) continue; // deleted in the work tree
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(join(REPO, file), join(to, file));
  }
}

const steps = action.runs.steps;
const [install, ...rest] = steps;
const installed: Job = { inputs: {}, outputs: {}, path: [] };

beforeAll(async () => {
  mkdirSync(runnerTemp);
  await copyRepository(actionPath);
  const done = await runSteps([install!], scratch, installed);
  const r = done[install!.name]!;
  expect(r.code, r.out).toBe(0);
  // npm ci of the whole tree, a build and an install: about a minute alone, far more on a loaded machine.
}, 1_200_000);

function workspace(name: string, files: Record<string, string>): string {
  const dir = join(scratch, name);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), content);
  }
  return dir;
}

const GATEWAY = (
  JSON.parse(
    readFileSync(join(REPO, 'test', 'fixtures', 'reviews', 'create-cluster-outside-range.json'), 'utf8'),
  ) as { request: { object: unknown } }
).request.object;
const SERVICE = 'apiVersion: v1\nkind: Service\nmetadata: { name: web }\n';

describe('action.yml', () => {
  it('is a composite action whose upload step is pinned by a full commit id, its tag named', () => {
    expect(action.runs.using).toBe('composite');
    const upload = steps.find((s) => s.uses?.startsWith('github/codeql-action/upload-sarif@'))!;
    expect(upload.uses).toMatch(/@[0-9a-f]{40}$/);
    expect(text).toContain(`uses: ${upload.uses} # v4.36.2`);
    expect(upload.with?.['sarif_file']).toBe('${{ steps.check.outputs.sarif-file }}');
    expect(upload.if).toContain("inputs.upload-sarif == 'true'");
    expect(action.inputs['paths']?.required).toBe(true);
  });

  it('installs routability-webhook from its own checkout onto the PATH', () => {
    expect(installed.path).toEqual([join(runnerTemp, 'routability-webhook', 'bin')]);
    expect(existsSync(join(runnerTemp, 'routability-webhook', 'bin', 'routability-webhook'))).toBe(true);
  });

  it('a violation: annotations in the log, a SARIF log to upload, and the job fails with exit 1', async () => {
    const dir = workspace('ws-violation', {
      'deploy/bad.json': JSON.stringify(GATEWAY),
      'deploy/svc.yaml': SERVICE,
    });
    const job: Job = {
      inputs: { paths: 'deploy', 'service-cidr': '10.96.0.0/12', 'upload-sarif': 'true' },
      outputs: {},
      path: [...installed.path],
    };
    const done = await runSteps(rest, dir, job);
    const checkStep = done['Check Gateway addresses']!;
    expect(checkStep.code, checkStep.out).toBe(0);
    expect(checkStep.out).toMatch(
      /^::error file=deploy\/bad\.json,line=\d+,col=\d+,title=ClusterAddressOutsideServiceRange::/m,
    );
    expect(job.outputs['check']).toEqual({ 'exit-code': '1', 'sarif-file': 'routability-webhook.sarif' });
    const log = JSON.parse(readFileSync(join(dir, 'routability-webhook.sarif'), 'utf8')) as {
      runs: { results: { ruleId: string }[] }[];
    };
    expect(log.runs[0]!.results.map((r) => r.ruleId)).toEqual(['ClusterAddressOutsideServiceRange']);
    // The upload step would run (its condition holds); the last step fails the job.
    expect(condition(steps.find((s) => s.uses)!.if, job)).toBe(true);
    expect(done['Fail on findings']?.code).toBe(1);
  });

  it('clean manifests, several paths: exit-code 0, no SARIF unless asked, the failing step skipped', async () => {
    const dir = workspace('ws-clean', { 'a/svc.yaml': SERVICE, 'b c/svc.yaml': SERVICE });
    const job: Job = {
      inputs: { paths: 'a\na/svc.yaml', 'service-cidr': '10.96.0.0/12', output: 'text' },
      outputs: {},
      path: [...installed.path],
    };
    const done = await runSteps(rest, dir, job);
    expect(done['Check Gateway addresses']?.out).toMatch(/checked 0 Gateways in 1 file/);
    expect(job.outputs['check']).toEqual({ 'exit-code': '0' });
    expect(condition(steps.find((s) => s.uses)!.if, job)).toBe(false);
    expect(done['Fail on findings']).toBeUndefined();
  });

  it('no ranges: exit-code 2, the usage error in the log, no SARIF to upload', async () => {
    const dir = workspace('ws-usage', { 'svc.yaml': SERVICE });
    const job: Job = {
      inputs: { paths: 'svc.yaml', 'upload-sarif': 'true' },
      outputs: {},
      path: [...installed.path],
    };
    const done = await runSteps(rest, dir, job);
    expect(done['Check Gateway addresses']?.out).toMatch(/the service ranges are required/);
    expect(job.outputs['check']).toEqual({ 'exit-code': '2' });
    expect(done['Fail on findings']?.code).toBe(2);
  });
});
