/**
 * What the docs say about commands is what the commands do: every `routability-webhook <command>
 * --flag` written anywhere in the docs names a flag that command has; `check` examples give the
 * ranges it requires; every `npm run X` is a script of package.json and every `npm run bench -- NAME`
 * a benchmark of bench/benches.json; docs/commands.md's statements about
 * environment variables, `review` and the Node.js version hold.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { envName } from '../../src/config/flags.js';
import { testApp } from '../kit/app.js';
import { runCli } from '../kit/server-process.js';
import { docFiles, REPO } from './markdown.js';

const COMMANDS = readFileSync(join(REPO, 'docs', 'commands.md'), 'utf8');
const QUICK_START = readFileSync(join(REPO, 'docs', 'dev', 'quick-start.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  engines: { node: string };
  scripts: Record<string, string>;
};

interface Flag {
  readonly name: string;
  /** The environment variable --help names for it, if any. */
  readonly env: string | undefined;
}

/** Flags as each command's --help prints them: `--name` on a line, and `ROUTABILITY_WEBHOOK_X` if named. */
const help = new Map<string, Flag[]>();

/** The commands the executable's own --help lists. */
let commands: string[] = [];

beforeAll(async () => {
  const top = await runCli(['--help']);
  commands = [...top.stdout.matchAll(/^ {2}([a-z][a-z-]*) {2,}/gm)].map((m) => m[1]!);
  expect(commands).toContain('serve');
  for (const command of commands) {
    const r = await runCli([command, '--help']);
    expect(r.code, `${command} --help: ${r.stderr}`).toBe(0);
    const flags: Flag[] = [];
    let last: { name: string; env: string | undefined } | undefined;
    for (const line of r.stdout.split('\n')) {
      const flag = /^\s+(?:-\w, )?--([a-z][a-z0-9-]*)/.exec(line);
      if (flag) {
        last = { name: flag[1]!, env: undefined };
        flags.push(last);
      }
      const env = /\b(ROUTABILITY_WEBHOOK_[A-Z0-9_]+)\b/.exec(line);
      if (env && last) last.env = env[1];
    }
    help.set(command, flags);
  }
}, 60_000);

/** Every `routability-webhook <command> …` invocation in the docs, inline or in blocks, joined over `\` line ends. */
function invocations(): { doc: string; command: string; args: string }[] {
  const out: { doc: string; command: string; args: string }[] = [];
  for (const doc of docFiles()) {
    const text = readFileSync(join(REPO, doc), 'utf8').replace(/\\\n\s*/g, ' ');
    for (const m of text.matchAll(/routability-webhook ([a-z][a-z-]*)\b([^`\n|]*)/g))
      if (commands.includes(m[1]!)) out.push({ doc, command: m[1]!, args: m[2]! });
  }
  return out;
}

describe('command lines in the docs', () => {
  it('docs/commands.md lists every command', () => {
    const missing = commands.filter((c) => !COMMANDS.includes(`| \`${c}\` |`));
    expect(missing, 'add a row to the commands table of docs/commands.md for each').toEqual([]);
  });

  it('name only flags their command has', () => {
    const unknown = invocations().flatMap(({ doc, command, args }) =>
      [...args.matchAll(/(?:^|\s|\[)--([a-z][a-z0-9-]*)/g)]
        .map((m) => m[1]!)
        .filter((name) => !help.get(command)!.some((f) => f.name === name))
        .map((name) => `${doc}: routability-webhook ${command} --${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('give `check` the service ranges it requires (`--service-cidr` or `--from-cluster`)', () => {
    const bare = invocations()
      .filter(({ command, args }) => command === 'check' && /\s-f\s/.test(` ${args} `))
      .filter(({ args }) => !/--service-cidr|--from-cluster/.test(args) && !/<[^>]*>\s*$/.test(args.trim()))
      .map(({ doc, args }) => `${doc}: routability-webhook check${args}`);
    expect(bare).toEqual([]);
  });

  it('`check` without ranges really exits 2, on a Gateway that passes with them', async () => {
    const gateway = [
      'apiVersion: gateway.networking.k8s.io/v1',
      'kind: Gateway',
      'metadata: { name: g, namespace: apps }',
      'spec:',
      '  gatewayClassName: example',
      '  listeners: [{ name: http, port: 80, protocol: HTTP }]',
      '',
    ].join('\n');
    const withRanges = await runCli(['check', '-f', '-', '--service-cidr', '10.96.0.0/12'], {
      input: gateway,
    });
    expect(withRanges.code, withRanges.stderr).toBe(0);
    const without = await runCli(['check', '-f', '-'], { input: gateway });
    expect(without.code).toBe(2);
    expect(without.stderr).toContain('the service ranges are required');
  });

  it('name only npm scripts package.json has', () => {
    const missing: string[] = [];
    for (const doc of docFiles()) {
      const text = readFileSync(join(REPO, doc), 'utf8');
      for (const m of text.matchAll(/npm run ([a-z][\w:-]*)/g))
        if (!(m[1]! in pkg.scripts)) missing.push(`${doc}: npm run ${m[1]}`);
    }
    expect(missing).toEqual([]);
  });

  it('name only benchmarks bench/benches.json lists (`npm run bench -- NAME`)', () => {
    const benches = JSON.parse(readFileSync(join(REPO, 'bench', 'benches.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const named: string[] = [];
    const missing: string[] = [];
    for (const doc of docFiles()) {
      const text = readFileSync(join(REPO, doc), 'utf8');
      for (const m of text.matchAll(/npm run bench -- ([a-z][\w-]*)/g)) {
        named.push(m[1]!);
        if (!Object.hasOwn(benches, m[1]!)) missing.push(`${doc}: npm run bench -- ${m[1]}`);
      }
    }
    expect(named.length).toBeGreaterThan(5);
    expect(missing).toEqual([]);
  });
});

describe('docs/commands.md: serve flags', () => {
  it('the table has a row for every flag of serve --help, and no other', () => {
    const section = COMMANDS.slice(COMMANDS.indexOf('## `serve` flags'), COMMANDS.indexOf('A bad flag'));
    const rows = [...section.matchAll(/^\| (`--[^|]*) \|/gm)].flatMap((m) =>
      [...m[1]!.matchAll(/`--([a-z-]+)`/g)].map((f) => f[1]!).filter((f) => !f.startsWith('no-')),
    );
    const flags = help
      .get('serve')!
      .map((f) => f.name)
      .filter((f) => f !== 'help');
    expect(rows.sort(), 'docs/commands.md "## `serve` flags" table vs serve --help').toEqual(flags.sort());
  });
});

describe('docs/commands.md: environment variables', () => {
  it('every flag names its variable in --help, except `check -f` and the crd-patch and policy flags that read none', () => {
    const without = [...help].flatMap(([command, flags]) =>
      flags.filter((f) => f.name !== 'help' && f.env === undefined).map((f) => `${command} --${f.name}`),
    );
    expect(without.sort()).toEqual([
      'check --filename',
      'crd-patch --apply',
      'crd-patch --gep-revision',
      'crd-patch --patch-cluster',
      'policy --allowed-routability',
      'policy --apply',
      'policy --cluster-domain',
      'policy --gep-revision',
      'policy --name',
      'policy --params-name',
      'policy --params-namespace',
      'policy --service-cidr',
      'policy --spec-policy',
      'policy --status-policy',
    ]);
    expect(COMMANDS).toContain(
      'Exceptions, which read no variable: `check -f`\nand the flags of `crd-patch` other than `--kubeconfig`.',
    );
  });

  // What --help says is what the parser does: a flag reads its variable unless it is declared noEnv.
  it('each --help names a variable for exactly the flags that read one (not declared noEnv)', async () => {
    for (const name of commands) {
      // The built module, loaded from its path (it is what `routability-webhook` runs).
      const module = pathToFileURL(join(REPO, 'dist', 'cli', `${name}.js`)).href;
      const { command } = (await import(/* @vite-ignore */ module)) as {
        command: { flags: Record<string, { noEnv?: boolean }> };
      };
      const declared = Object.entries(command.flags)
        .filter(([flag]) => flag !== 'help')
        .map(([flag, def]) => `--${flag} ${def.noEnv === true ? '(none)' : envName(flag)}`);
      const shown = help
        .get(name)!
        .filter((f) => f.name !== 'help')
        .map((f) => `--${f.name} ${f.env ?? '(none)'}`);
      expect(shown.sort(), `${name} --help`).toEqual(declared.sort());
    }
  });

  it('a variable named in --help does set its flag', async () => {
    const flag = help.get('check')!.find((f) => f.name === 'service-cidr')!;
    expect(flag.env).toBe('ROUTABILITY_WEBHOOK_SERVICE_CIDR');
    const r = await runCli(['check', '-f', '-'], { env: { [flag.env!]: '10.96.0.0/12' }, input: '' });
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('docs/commands.md: review', () => {
  it('needs --service-cidr, as docs/commands.md says', async () => {
    expect(COMMANDS).toMatch(/\| `review` \|[^\n]*Needs `--service-cidr`/);
    const r = await runCli(['review'], { input: '{}', env: { ROUTABILITY_WEBHOOK_SERVICE_CIDR: '' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--service-cidr');
  });

  it('prints the content the server answers, pretty-printed', async () => {
    const fixture = readFileSync(
      join(REPO, 'test', 'fixtures', 'reviews', 'create-cluster-outside-range.json'),
      'utf8',
    );
    const cli = await runCli(['review', '--service-cidr', '10.96.0.0/12,fd00:10:96::/112'], {
      input: fixture,
    });
    const { app } = testApp();
    const res = await app.inject({
      method: 'POST',
      url: '/validate',
      headers: { 'content-type': 'application/json' },
      payload: fixture,
    });
    expect(JSON.parse(cli.stdout)).toEqual(res.json());
    expect(cli.stdout).toBe(`${JSON.stringify(res.json(), null, 2)}\n`);
    expect(res.body).toBe(JSON.stringify(res.json()));
    expect(COMMANDS).toContain('with the same content (pretty-printed JSON; the server sends it compact)');
    await app.close();
  });
});

describe('docs/dev/quick-start.md: Node.js version', () => {
  it("states package.json's engines range", () => {
    expect(
      QUICK_START.includes(`Node.js \`${pkg.engines.node}\``),
      `docs/dev/quick-start.md must say "Node.js \`${pkg.engines.node}\`" (package.json engines.node), and what CI runs on`,
    ).toBe(true);
  });
});
