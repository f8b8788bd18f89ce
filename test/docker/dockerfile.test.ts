// Static checks of the Dockerfile (there is no Docker engine to build it here): two stages,
// production dependencies only, a numeric non-root user, no key material, the right entrypoint.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}
interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** Parses a Dockerfile into stages: comments dropped, backslash continuations joined, ARG defaults substituted in FROM. */
export function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const instructions: Instruction[] = [];
  let buffer = '';
  let startLine = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (buffer === '' && (line === '' || line.startsWith('#'))) return;
    if (buffer !== '' && line.startsWith('#')) return; // comment inside a continuation
    if (buffer === '') startLine = index + 1;
    if (line.endsWith('\\')) {
      buffer += `${line.slice(0, -1).trim()} `;
      return;
    }
    buffer += line;
    const match = /^(\S+)\s*(.*)$/s.exec(buffer);
    if (match)
      instructions.push({
        keyword: (match[1] as string).toUpperCase(),
        args: (match[2] as string).trim(),
        line: startLine,
      });
    buffer = '';
  });
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`line ${ins.line}: cannot parse FROM ${ins.args}`);
      const from = (m[1] as string).replace(/\$\{?(\w+)\}?/g, (_, name: string) => globalArgs[name] ?? '');
      stages.push({ from, name: m[2], instructions: [] });
    } else if (stages.length === 0) {
      if (ins.keyword === 'ARG') {
        const [name, value] = ins.args.split('=');
        globalArgs[name as string] = value ?? '';
      }
    } else {
      (stages.at(-1) as Stage).instructions.push(ins);
    }
  }
  return { args: globalArgs, stages };
}

const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const { stages } = parseDockerfile(dockerfile);
const [build, runtime] = stages as [Stage, Stage];
const runs = (stage: Stage) => stage.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
const copies = (stage: Stage) =>
  stage.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD');

describe('parseDockerfile (the parser itself)', () => {
  it('joins continuations, drops comments and resolves ARG in FROM', () => {
    const parsed = parseDockerfile(
      'ARG B=node:20\n# c\nFROM ${B} AS one\nRUN a \\\n  # inner\n  && b\nFROM one\nUSER 1:1\n',
    );
    expect(parsed.stages.map((s) => [s.from, s.name])).toEqual([
      ['node:20', 'one'],
      ['one', undefined],
    ]);
    expect(parsed.stages[0]?.instructions[0]?.args).toBe('a && b');
  });
});

describe('Dockerfile', () => {
  it('has two stages on a tagged node:20-bookworm-slim base', () => {
    expect(stages).toHaveLength(2);
    expect(build.name).toBe('build');
    for (const stage of stages) {
      expect(stage.from).toBe('node:20-bookworm-slim');
      expect(stage.from).not.toMatch(/:latest$/);
    }
  });

  it('builds with dev dependencies, then keeps only production dependencies', () => {
    const commands = runs(build)
      .join(' && ')
      .split(/\s*&&\s*/);
    const firstCi = commands.findIndex((c) => /^npm ci\b/.test(c));
    const buildStep = commands.findIndex((c) => /^npm run build\b/.test(c));
    const lastCi = commands.findLastIndex((c) => /^npm ci\b/.test(c));
    expect(firstCi).toBeGreaterThanOrEqual(0);
    expect(buildStep).toBeGreaterThan(firstCi);
    expect(lastCi).toBeGreaterThan(buildStep);
    expect(commands[lastCi]).toMatch(/--omit=dev\b/);
    expect(commands.join('\n')).not.toMatch(/npm (install|i)\b/);
  });

  it('the runtime stage installs nothing and copies only the build output and production node_modules', () => {
    expect(runs(runtime).join('\n')).not.toMatch(/\bnpm (ci|install|i)\b|\byarn\b|\bpnpm\b/);
    const sources = copies(runtime).map((c) => {
      expect(c.keyword).toBe('COPY');
      expect(c.args).toMatch(/^--from=build\s/);
      return c.args.replace(/^--from=build\s+/, '').split(/\s+/)[0];
    });
    expect(sources.sort()).toEqual(['/src/dist', '/src/node_modules', '/src/package.json']);
  });

  it('runs as a numeric non-root user, set in the final stage and never switched back', () => {
    const users = runtime.instructions.filter((i) => i.keyword === 'USER');
    expect(users).toHaveLength(1);
    const [uid, gid] = (users[0] as Instruction).args.split(':');
    expect(uid).toMatch(/^\d+$/);
    expect(gid).toMatch(/^\d+$/);
    expect(Number(uid)).toBeGreaterThan(0);
    expect(Number(gid)).toBeGreaterThan(0);
    const last = runtime.instructions.findLastIndex((i) => ['RUN', 'COPY', 'ADD'].includes(i.keyword));
    expect(runtime.instructions.indexOf(users[0] as Instruction)).toBeGreaterThan(last);
  });

  it('matches the chart: the uid the pods run as and the ports they probe', () => {
    const values = readFileSync(join(root, 'charts', 'gateway-routability-webhook', 'values.yaml'), 'utf8');
    const uid = (runtime.instructions.find((i) => i.keyword === 'USER') as Instruction).args.split(':')[0];
    expect(values).toContain(`runAsUser: ${uid}`);
    const expose = runtime.instructions.find((i) => i.keyword === 'EXPOSE')?.args.split(/\s+/);
    expect(expose?.sort()).toEqual(['8080', '8443']);
  });

  it('bakes in no certificates, keys or secrets', () => {
    for (const stage of stages) {
      for (const c of copies(stage)) {
        expect(c.keyword, `line ${c.line}: ADD can fetch URLs and unpack archives`).toBe('COPY');
        const sources = c.args
          .replace(/--\S+\s+/g, '')
          .split(/\s+/)
          .slice(0, -1);
        for (const src of sources) {
          expect(src, `line ${c.line}`).not.toMatch(/^\.$|^\.\/?$|certs|\.pem$|\.key$|\.crt$|\.p12$|tls/);
        }
      }
      for (const run of runs(stage)) expect(run).not.toMatch(/openssl|\bcerts\b|selfsigned|--dev\b/);
      for (const env of stage.instructions.filter((i) => ['ENV', 'ARG'].includes(i.keyword))) {
        expect(env.args).not.toMatch(/KEY|TOKEN|PASSWORD|SECRET/i);
      }
    }
  });

  it('build-stage COPY sources exist in the repository (nothing else is sent)', () => {
    for (const c of copies(build)) {
      const sources = c.args.split(/\s+/).slice(0, -1);
      for (const src of sources) expect(existsSync(join(root, src)), src).toBe(true);
    }
  });

  it('starts `routability-webhook serve`, the package bin, in exec form', () => {
    const entrypoint = runtime.instructions.find((i) => i.keyword === 'ENTRYPOINT');
    const cmd = runtime.instructions.find((i) => i.keyword === 'CMD');
    expect(JSON.parse(entrypoint?.args ?? 'null')).toEqual(['node', '/app/dist/cli/main.js']);
    expect(JSON.parse(cmd?.args ?? 'null')).toEqual(['serve']);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };
    expect(`/app/${pkg.bin['routability-webhook']}`).toBe('/app/dist/cli/main.js');
    expect(runs(runtime).join('\n')).toContain(
      'ln -s /app/dist/cli/main.js /usr/local/bin/routability-webhook',
    );
  });

  it('sets NODE_ENV=production', () => {
    expect(
      runtime.instructions.some((i) => i.keyword === 'ENV' && /\bNODE_ENV=production\b/.test(i.args)),
    ).toBe(true);
  });
});

describe('.dockerignore', () => {
  const patterns = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

  it.each([
    '.git',
    'node_modules',
    'dist',
    '.cache',
    'certs',
    '*.pem',
    '*.key',
    '**/*.pem',
    '**/*.key',
    '.env',
  ])('excludes %s', (pattern) => {
    expect(patterns).toContain(pattern);
  });

  it('re-includes nothing', () => {
    expect(patterns.filter((p) => p.startsWith('!'))).toEqual([]);
  });
});
