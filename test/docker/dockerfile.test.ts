// Static checks of the Dockerfile that complement `npm run test:image` (which builds and runs the
// image): they run everywhere in a second, and guard what a green image test can miss — the Node
// line agreeing across Dockerfile, engines, CI and README; every `npm ci` checked by `npm ls` and fed
// by secrets only; the build context keeping what the build copies; the image matching the chart.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

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

/** Whether a path is excluded from the build context by .dockerignore patterns (last match wins). */
export function ignoredBy(patterns: string[], path: string): boolean {
  let ignored = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const pattern = (negate ? raw.slice(1) : raw).replace(/^\/+|\/+$/g, '');
    const source = pattern
      .split('/')
      .map((part) =>
        part === '**'
          ? '.*'
          : part
              .replace(/[.+^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '[^/]*')
              .replace(/\?/g, '[^/]'),
      )
      .join('/')
      .replace(/\.\*\//g, '(?:.*/)?');
    // A pattern matching a folder excludes everything below it.
    if (new RegExp(`^${source}(?:/.*)?$`).test(path)) ignored = !negate;
  }
  return ignored;
}

const { stages, args } = parseDockerfile(read('Dockerfile'));
const byName = (name: string) => stages.find((s) => s.name === name) as Stage;
const runtime = stages.at(-1) as Stage;
const runs = (stage: Stage) => stage.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
const copies = (stage: Stage) =>
  stage.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD');
const dockerignore = read('.dockerignore')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

describe('parseDockerfile and ignoredBy (the helpers themselves)', () => {
  it('joins continuations, drops comments and resolves ARG in FROM', () => {
    const parsed = parseDockerfile(
      'ARG B=node:24\n# c\nFROM ${B} AS one\nRUN a \\\n  # inner\n  && b\nFROM one\nUSER 1:1\n',
    );
    expect(parsed.stages.map((s) => [s.from, s.name])).toEqual([
      ['node:24', 'one'],
      ['one', undefined],
    ]);
    expect(parsed.stages[0]?.instructions[0]?.args).toBe('a && b');
  });

  it('matches .dockerignore patterns like the builder does', () => {
    expect(ignoredBy(['test'], 'test/a/b.ts')).toBe(true);
    expect(ignoredBy(['**/*.pem'], 'src/x/y.pem')).toBe(true);
    expect(ignoredBy(['*.pem'], 'src/y.pem')).toBe(false);
    expect(ignoredBy(['*.log', '!keep.log'], 'keep.log')).toBe(false);
    expect(ignoredBy(['dist'], 'distribution.json')).toBe(false);
  });
});

const { NODE_MAJOR, NODE_VERSION } = (await import(
  pathToFileURL(join(root, 'scripts', 'node-lts.mjs')).href
)) as {
  NODE_MAJOR: number;
  NODE_VERSION: string;
};

describe('one Node.js line everywhere', () => {
  const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };

  it('the Dockerfile builds on node:<the CI-tested major>-bookworm-slim, pinned by digest', () => {
    expect(args['NODE_IMAGE']).toMatch(
      new RegExp(`^docker\\.io/library/node:${NODE_MAJOR}-bookworm-slim@sha256:[0-9a-f]{64}$`),
    );
    expect(NODE_VERSION.startsWith(`${NODE_MAJOR}.`)).toBe(true);
  });

  it('scripts/image/base.mjs reads that pin, and its stand-in carries the same name', async () => {
    const base = (await import(pathToFileURL(join(root, 'scripts', 'image', 'base.mjs')).href)) as {
      dockerfileBase(text: string): string | undefined;
      NODE_IMAGE: string;
    };
    expect(base.dockerfileBase(read('Dockerfile'))).toBe(args['NODE_IMAGE']);
    expect(args['NODE_IMAGE']?.split('@')[0]).toBe(base.NODE_IMAGE);
    // A base by tag alone is not a pin: the image test refuses it.
    expect(base.dockerfileBase('ARG NODE_IMAGE=node:24-bookworm-slim\n')).toBeUndefined();
  });

  it('package.json engines admits that major (and only LTS lines)', () => {
    const ranges = pkg.engines.node.split('||').map((r) => r.trim());
    expect(ranges).toContain(`^${NODE_MAJOR}.11.0`);
    for (const range of ranges) expect(Number(/^\^(\d+)\./.exec(range)?.[1]) % 2, range).toBe(0);
  });

  it('.ci/run runs the test suite on that Node and runs the image test', () => {
    const ci = read('.ci/run');
    expect(ci).toMatch(/node scripts\/node-lts\.mjs/);
    expect(ci).toMatch(/npm run test:image/);
  });

  // The README states the engines range (test/docs checks that), so it follows from the above.
});

describe('Dockerfile', () => {
  it('builds in node stages and ships a runtime stage FROM scratch: no shell, no package manager', () => {
    expect(stages.map((s) => s.name)).toEqual(['deps', 'build', 'rootfs', undefined]);
    for (const stage of [byName('deps'), byName('build'), byName('rootfs')])
      expect(stage.from).toBe(args['NODE_IMAGE']);
    // npm, corepack, yarn, headers, the shell and apt sit in the node image's layers: a runtime
    // stage built on it would ship them however many files it deletes.
    expect(runtime.from).toBe('scratch');
    expect(runs(runtime)).toEqual([]); // nothing to run a RUN with
    expect(Object.keys(args)).toEqual(['NODE_IMAGE']);
  });

  it('the rootfs stage proves node runs from that root alone, as root and as the runtime user', () => {
    const rootfs = runs(byName('rootfs')).join('\n');
    expect(rootfs).toContain('chroot /rootfs /usr/local/bin/node');
    expect(rootfs).toContain('chroot --userspec=65532:65532 /rootfs /usr/local/bin/node');
    for (const pkg of ['libc6', 'libgcc-s1', 'libstdc++6']) expect(rootfs).toContain(pkg);
    expect(rootfs).toContain('/rootfs/var/lib/dpkg/status.d/');
    expect(rootfs).not.toMatch(/\/bin\/(sh|bash|dash)\b.*\/rootfs|apt-get|dpkg -i/);
  });

  it('checks every npm ci with npm ls in the same step, and feeds npm only through secrets', () => {
    let installs = 0;
    for (const stage of stages) {
      for (const run of runs(stage)) {
        if (!/\bnpm ci\b/.test(run)) continue;
        installs += 1;
        const steps = run.replace(/^(--mount=\S+\s+)+/, '').split(/\s*&&\s*/);
        const ci = steps.findIndex((s) => s.startsWith('npm ci'));
        const ls = steps.findIndex((s) => s.startsWith('npm ls'));
        expect(ls, run).toBeGreaterThan(ci);
        // The same view of the tree: a production install is checked without dev dependencies.
        expect(/--omit=dev/.test(steps[ls] as string)).toBe(/--omit=dev/.test(steps[ci] as string));
        expect(run).toContain('--mount=type=secret,id=npmrc,target=/root/.npmrc');
        expect(run).toContain('--mount=type=secret,id=npm-ca,target=/run/secrets/npm-ca');
      }
    }
    expect(installs).toBe(2);
    for (const stage of stages)
      for (const ins of stage.instructions.filter((i) => ['ENV', 'ARG'].includes(i.keyword)))
        expect(ins.args).not.toMatch(/registry|cafile|\bca=|token|auth|password|secret|key/i);
  });

  it('the runtime stage copies the assembled root, production node_modules and dist only', () => {
    const sources = copies(runtime).map((c) => {
      expect(c.keyword).toBe('COPY');
      const m = /^--from=(\S+)\s+(\S+)\s+\S+$/.exec(c.args);
      expect(m, c.args).not.toBeNull();
      return `${m?.[1]}:${m?.[2]}`;
    });
    expect(sources.sort()).toEqual([
      'build:/src/dist',
      'build:/src/package.json',
      'deps:/src/node_modules',
      'rootfs:/rootfs/',
    ]);
  });

  it('names no frontend image by tag (no `# syntax=` line)', () => {
    expect(read('Dockerfile')).not.toMatch(/^#\s*syntax=/m);
  });

  it('every file the build stages copy is in the build context', () => {
    for (const stage of stages) {
      for (const c of copies(stage).filter((c) => !c.args.startsWith('--from='))) {
        const sources = c.args.split(/\s+/).slice(0, -1);
        for (const src of sources) expect(ignoredBy(dockerignore, src.replace(/^\.\//, '')), src).toBe(false);
      }
    }
  });

  it('runs as the chart pod user, on the ports the chart probes, as the package bin', () => {
    const values = read('charts/gateway-routability-webhook/values.yaml');
    const users = runtime.instructions.filter((i) => i.keyword === 'USER');
    expect(users).toHaveLength(1);
    const [uid, gid] = (users[0] as Instruction).args.split(':');
    expect(values).toContain(`runAsUser: ${uid}`);
    expect(values).toContain(`runAsGroup: ${gid}`);
    expect(Number(uid)).toBeGreaterThan(0);
    const expose = runtime.instructions.find((i) => i.keyword === 'EXPOSE')?.args.split(/\s+/);
    expect(values).toContain(`port: ${expose?.[0]}`);
    expect(values).toContain(`healthPort: ${expose?.[1]}`);
    const pkg = JSON.parse(read('package.json')) as { bin: Record<string, string> };
    const entrypoint = runtime.instructions.find((i) => i.keyword === 'ENTRYPOINT');
    // An absolute path: no shell or PATH lookup is needed to start it.
    expect(JSON.parse(entrypoint?.args ?? 'null')).toEqual([
      '/usr/local/bin/node',
      `/app/${pkg.bin['routability-webhook']}`,
    ]);
    expect(JSON.parse(runtime.instructions.find((i) => i.keyword === 'CMD')?.args ?? 'null')).toEqual([
      'serve',
    ]);
  });
});

describe('nothing expects a shell in the image', () => {
  const templates = join(root, 'charts', 'gateway-routability-webhook', 'templates');
  it.each(readdirSync(templates).filter((f) => /\.(ya?ml|tpl)$/.test(f)))(
    'chart template %s runs the image entrypoint (no command:, no sh -c)',
    (file) => {
      const text = readFileSync(join(templates, file), 'utf8');
      expect(text).not.toMatch(/^\s*command:/m);
      expect(text).not.toMatch(/\bsh\s+-c\b|\/bin\/(ba|da)?sh\b/);
    },
  );
});

describe('.dockerignore', () => {
  it.each([
    '.git',
    'node_modules',
    'dist',
    '.cache',
    'certs/tls.key',
    'a/b/tls.pem',
    'x.key',
    '.env',
    'test/x.ts',
  ])('keeps %s out of the build context', (path) => expect(ignoredBy(dockerignore, path)).toBe(true));
});
