/**
 * The GitHub Actions workflows cannot run code that a moved tag or a new upload changes
 * (issue 37, M4 and L9): every action pinned by a full commit id with its tag in a comment, every
 * job with its own minimal permissions (an OIDC token only where signing happens), npm installed
 * at the exact pinned version, and every other download checked against a pinned hash.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const REPO = join(import.meta.dirname, '..', '..');
const WORKFLOWS = join(REPO, '.github', 'workflows');
const files = readdirSync(WORKFLOWS).filter((f) => /\.ya?ml$/.test(f));

/** The jobs allowed to mint an OIDC token: the release's signing job, and nothing else. */
const ID_TOKEN_JOBS = ['release.yml: sign'];

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Job {
  permissions?: Record<string, string> | string;
  steps?: Step[];
  uses?: string;
}
interface Workflow {
  permissions?: Record<string, string> | string;
  jobs: Record<string, Job>;
}

const PINNED_USES = /^[\w.-]+\/[\w.-]+(\/[\w./-]+)?@[0-9a-f]{40}$/;
const TAG_COMMENT = /^v\d+(\.\d+){0,2}$/;

/** Every `uses:` line of the raw text, with the comment after it (YAML drops comments). */
function usesLines(text: string) {
  return [...text.matchAll(/^\s*(?:-\s+)?uses:\s*['"]?([^\s'"#]+)['"]?[ \t]*(?:#[ \t]*(\S+))?/gm)].map(
    (m) => ({ ref: m[1] as string, tag: m[2] }),
  );
}

function actionProblems(name: string, text: string, workflow: Workflow): string[] {
  const problems: string[] = [];
  const lines = usesLines(text);
  const parsed = Object.values(workflow.jobs).flatMap((job) => [
    ...(job.uses ? [job.uses] : []),
    ...(job.steps ?? []).filter((s) => s.uses).map((s) => s.uses as string),
  ]);
  if (lines.length !== parsed.length)
    problems.push(`${name}: ${parsed.length} uses in the YAML but ${lines.length} uses: lines were read`);
  for (const { ref, tag } of lines) {
    if (ref.startsWith('./')) continue; // an action or workflow of this repository
    if (ref.startsWith('docker://')) {
      if (!/@sha256:[0-9a-f]{64}$/.test(ref)) problems.push(`${name}: ${ref} is not pinned by digest`);
      continue;
    }
    if (!PINNED_USES.test(ref))
      problems.push(`${name}: ${ref} is not pinned by a full commit id (owner/repo@<40 hex>)`);
    else if (!tag || !TAG_COMMENT.test(tag))
      problems.push(`${name}: ${ref} has no comment naming its tag (# vX.Y.Z)`);
  }
  return problems;
}

const isReadOnly = (p: Workflow['permissions']) =>
  p !== undefined &&
  (p === 'read-all' ||
    (typeof p === 'object' && Object.values(p).every((v) => v === 'read' || v === 'none')));

function permissionProblems(name: string, workflow: Workflow): string[] {
  const problems: string[] = [];
  if (!isReadOnly(workflow.permissions))
    problems.push(`${name}: top-level permissions must be {} or read-only`);
  for (const [id, job] of Object.entries(workflow.jobs)) {
    const p = job.permissions;
    if (p === undefined || typeof p !== 'object') {
      problems.push(`${name}: job ${id} has no permissions block of its own`);
      continue;
    }
    if (p['id-token'] === 'write' && !ID_TOKEN_JOBS.includes(`${name}: ${id}`))
      problems.push(`${name}: job ${id} may mint an OIDC token (id-token: write) but does not sign`);
  }
  return problems;
}

const runs = (workflow: Workflow) =>
  Object.values(workflow.jobs).flatMap((job) => (job.steps ?? []).map((s) => s.run ?? ''));

function downloadProblems(name: string, workflow: Workflow): string[] {
  const problems: string[] = [];
  for (const run of runs(workflow)) {
    if (/\bnpm\s+(install|i|add)\s+(-g|--global)\b/.test(run) || /\bnpx\s+npm@/.test(run))
      problems.push(`${name}: installs npm without its pin: use node scripts/pinned.mjs install-npm`);
    for (const spec of run.matchAll(/\b(npm|npx)\s+[^\n]*?\b([@\w/.-]+)@([^\s'"]+)/g))
      if (!/^\d+\.\d+\.\d+$/.test(spec[3] as string))
        problems.push(`${name}: ${spec[2]}@${spec[3]} is not an exact version`);
    if (/\b(curl|wget)\b/.test(run) && !/\bsha(256|512)sum\s+--check\b/.test(run))
      problems.push(`${name}: a step downloads with curl/wget without checking a pinned sha256/sha512`);
  }
  return problems;
}

/** Every problem of one workflow file, as messages naming the file, job or action. */
export function workflowProblems(name: string, text: string): string[] {
  const workflow = parse(text) as Workflow;
  return [
    ...actionProblems(name, text, workflow),
    ...permissionProblems(name, workflow),
    ...downloadProblems(name, workflow),
  ];
}

describe('the repository workflows', () => {
  it.each(files)('%s: actions pinned by commit, permissions per job, npm and downloads pinned', (file) => {
    expect(workflowProblems(file, readFileSync(join(WORKFLOWS, file), 'utf8'))).toEqual([]);
  });

  it('the release signs in exactly the job allowed an OIDC token, and no other job of any workflow has one', () => {
    const holders = files.flatMap((file) => {
      const workflow = parse(readFileSync(join(WORKFLOWS, file), 'utf8')) as Workflow;
      return Object.entries(workflow.jobs)
        .filter(([, job]) => typeof job.permissions === 'object' && job.permissions['id-token'] === 'write')
        .map(([id]) => `${file}: ${id}`);
    });
    expect(holders).toEqual(ID_TOKEN_JOBS);
  });
});

// One base workflow, each row plants one fault; the checker must name it.
const BASE = `name: t
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-24.04
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
      - run: node scripts/pinned.mjs install-npm
      - run: |
          curl -fsSL -o t.tgz https://example.invalid/t.tgz
          echo "0000  t.tgz" | sha256sum --check --strict
`;
const plant = (from: string, to: string) => {
  expect(BASE).toContain(from);
  return BASE.replace(from, to);
};

describe('workflowProblems (each planted fault is caught)', () => {
  it('accepts the base workflow', () => {
    expect(workflowProblems('t.yml', BASE)).toEqual([]);
  });

  it.each([
    [
      'an action by tag',
      plant('@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1', '@v4'),
      't.yml: actions/checkout@v4 is not pinned by a full commit id (owner/repo@<40 hex>)',
    ],
    [
      'an action by a short commit',
      plant('@3d3c42e5aac5ba805825da76410c181273ba90b1', '@3d3c42e'),
      't.yml: actions/checkout@3d3c42e is not pinned by a full commit id (owner/repo@<40 hex>)',
    ],
    [
      'a pinned action without its tag comment',
      plant(' # v7.0.1', ''),
      't.yml: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 has no comment naming its tag (# vX.Y.Z)',
    ],
    [
      'a docker action by tag',
      plant('actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1', 'docker://alpine:3'),
      't.yml: docker://alpine:3 is not pinned by digest',
    ],
    [
      'a job without permissions',
      plant('    permissions:\n      contents: read\n', ''),
      't.yml: job build has no permissions block of its own',
    ],
    [
      'write-all at the top',
      plant('permissions: {}', 'permissions: write-all'),
      't.yml: top-level permissions must be {} or read-only',
    ],
    [
      'no top-level permissions',
      plant('permissions: {}\n', ''),
      't.yml: top-level permissions must be {} or read-only',
    ],
    [
      'an OIDC token outside the signing job',
      plant('      contents: read\n', '      contents: read\n      id-token: write\n'),
      't.yml: job build may mint an OIDC token (id-token: write) but does not sign',
    ],
    [
      'a floating npm',
      plant('node scripts/pinned.mjs install-npm', 'npm install -g npm@11'),
      't.yml: installs npm without its pin: use node scripts/pinned.mjs install-npm',
    ],
    [
      'an npx tool by range',
      plant('node scripts/pinned.mjs install-npm', 'npx prettier@3 --check .'),
      't.yml: prettier@3 is not an exact version',
    ],
    [
      'a download without a hash check',
      plant('          echo "0000  t.tgz" | sha256sum --check --strict\n', ''),
      't.yml: a step downloads with curl/wget without checking a pinned sha256/sha512',
    ],
  ])('%s', (_, text, problem) => {
    expect(workflowProblems('t.yml', text)).toContain(problem);
  });
});
