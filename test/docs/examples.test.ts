/**
 * The command examples of README.md, docs/*.md and the chart README, run as a reader would run
 * them, and their shown output compared. Markers (docs/dev/writing-docs.md) say what a block is:
 * a file to write, a command to run (and its exit code), the output it prints, or why it cannot
 * run here (it needs a cluster). Every shell block must say one or the other, so a new example
 * cannot slip past.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kubectlApply } from './kubectl.js';
import { docFiles, normalise, parseDoc, REPO, type Block, type Step } from './markdown.js';
import { writeShims } from './shims.js';

const SHELL = new Set(['sh', 'bash', 'shell', 'console']);

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-o', 'pipefail', '-ec', script],
      { cwd, env, timeout: 120_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const where = (b: Block) => `${b.doc}:${b.line}`;

describe('every shell example says whether it runs in the doc tests', () => {
  it.each(docFiles())('%s', (doc) => {
    const unmarked = parseDoc(doc)
      .flatMap((s) => (s.type === 'block' ? [s.block] : []))
      .filter((b) => SHELL.has(b.lang) && b.marker?.kind !== 'run' && b.marker?.kind !== 'skip')
      .map(where);
    expect(
      unmarked,
      'put <!-- doctest: run --> (it runs offline; add <!-- doctest: output --> above a block of what it prints) or <!-- doctest: skip WHY --> right above each of these blocks (docs/dev/writing-docs.md)',
    ).toEqual([]);
  });

  it.each(docFiles())('%s: every output block follows a command that runs', (doc) => {
    const steps = parseDoc(doc).flatMap((s) => (s.type === 'block' ? [s.block] : []));
    const orphans = steps
      .filter(
        (b, i) =>
          b.marker?.kind === 'output' && !['run', 'kubectl-apply'].includes(steps[i - 1]?.marker?.kind ?? ''),
      )
      .map(where);
    expect(orphans, 'an <!-- doctest: output --> block must come right after a run block').toEqual([]);
  });
});

/** Flags that make a pasted `helm upgrade` keep the values of the installed release. */
const KEEPS_VALUES = /\s(--reuse-values|--reset-then-reuse-values|-f|--values)(\s|=|$)/;

describe('every helm upgrade in the docs is safe to paste and checked', () => {
  it.each(docFiles())('%s', (doc) => {
    const steps = parseDoc(doc);
    const problems: string[] = [];
    steps.forEach((s, i) => {
      if (s.type !== 'block' || !SHELL.has(s.block.lang)) return;
      const commands = s.block.body.replace(/\\\n\s*/g, ' ').split('\n');
      for (const c of commands.filter((l) => /^\s*helm upgrade\s/.test(l)))
        if (!KEEPS_VALUES.test(c)) problems.push(`${where(s.block)}: ${c.trim()} (resets every other value)`);
      const next = steps[i + 1];
      if (
        s.block.marker?.kind === 'run' &&
        commands.some((l) => /^\s*helm upgrade\s/.test(l)) &&
        !(next?.type === 'setup' && next.command.startsWith('doc-rendered '))
      )
        problems.push(`${where(s.block)}: no <!-- doctest: setup doc-rendered … --> line after it`);
    });
    const text = readFileSync(join(REPO, doc), 'utf8');
    for (const m of text.matchAll(/`(helm upgrade[^`]*)`/g))
      // A bare `helm upgrade` names the command; one with arguments is meant to be pasted.
      if (m[1]!.trim() !== 'helm upgrade' && !KEEPS_VALUES.test(m[1]!))
        problems.push(`${doc}: \`${m[1]}\` (resets every other value)`);
    expect(
      problems,
      'give each helm upgrade --reuse-values (or a values file), and check what a run one renders (docs/dev/writing-docs.md)',
    ).toEqual([]);
  });
});

const runnable = docFiles()
  .map((doc) => ({ doc, steps: parseDoc(doc) }))
  .filter(({ steps }) =>
    steps.some((s) => s.type === 'setup' || (s.type === 'block' && s.block.marker?.kind === 'run')),
  );

describe('doc examples run and print what the docs show', () => {
  const root = mkdtempSync(join(tmpdir(), 'doctest-'));
  const shims = join(root, 'bin');
  const { skipHelm } = writeShims(shims);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  for (const { doc, steps } of runnable) {
    describe(doc, () => {
      // One scratch folder per document: later examples see the files earlier ones wrote.
      const dir = join(root, doc.replace(/[/.]/g, '_'));
      mkdirSync(dir, { recursive: true });
      for (const link of ['charts', 'test', 'docs']) symlinkSync(join(REPO, link), join(dir, link));
      const env = {
        ...process.env,
        PATH: `${shims}:${process.env.PATH}`,
        REPO,
        KUBECONFIG: join(dir, 'no-kubeconfig'),
      };
      let last: { block: Block; text: string } | undefined;

      const run = async (step: Step) => {
        if (step.type === 'setup') {
          const r = await bash(step.command, dir, env);
          expect(r.code, `${doc}:${step.line} setup failed: ${r.stderr}`).toBe(0);
          return;
        }
        const { block } = step;
        const m = block.marker;
        if (!m) return;
        if (m.kind === 'file') {
          mkdirSync(dirname(join(dir, m.name)), { recursive: true });
          writeFileSync(join(dir, m.name), block.body);
        } else if (m.kind === 'run') {
          const r = await bash(block.body, dir, env);
          expect(r.code, `${where(block)} exited ${r.code}, the doc says ${m.exit}:\n${r.stderr}`).toBe(
            m.exit,
          );
          last = { block, text: r.stdout };
        } else if (m.kind === 'kubectl-apply') {
          last = { block, text: await kubectlApply(dir, m.file, m.args) };
          expect(normalise(block.body), `${where(block)} shows what kubectl would print`).toBe(
            normalise(last.text),
          );
        } else if (m.kind === 'output') {
          expect(last, `${where(block)}: no command ran before this output`).toBeDefined();
          expect(
            normalise(last!.text),
            `${where(block)} must show exactly what ${where(last!.block)} prints`,
          ).toBe(normalise(block.body));
        }
      };

      const needsHelm = steps.some(
        (s) => s.type === 'block' && s.block.marker?.kind === 'run' && /(^|\s)helm\s/m.test(s.block.body),
      );
      const title = steps
        .flatMap((s) => (s.type === 'block' && s.block.marker?.kind === 'run' ? [s.block.line] : []))
        .join(', ');
      it.skipIf(needsHelm && skipHelm !== undefined)(
        `runs the examples at lines ${title}`,
        async () => {
          for (const step of steps) await run(step);
        },
        300_000,
      );
    });
  }
});
