/**
 * The CLI on a workstation: the package `npm pack` makes installs with
 * `npm install -g` (here into a temporary prefix), and the installed
 * `routability-webhook` answers --help, check and review from a folder that is
 * not the clone; `kubectl-routability` (the kubectl plugin) checks too, and the
 * pre-commit hook's entry runs on file names appended as pre-commit appends them.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const REPO = join(import.meta.dirname, '..', '..');
const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
const scratch = mkdtempSync(join(tmpdir(), 'packed-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function run(cmd: string, args: string[], opts: { cwd: string; input?: string; env?: NodeJS.ProcessEnv }) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      cmd,
      args,
      { cwd: opts.cwd, env: { ...process.env, ...opts.env }, timeout: 240_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(opts.input ?? '');
  });
}

const prefix = join(scratch, 'prefix');
const GATEWAY = (
  JSON.parse(
    readFileSync(join(REPO, 'test', 'fixtures', 'reviews', 'create-cluster-outside-range.json'), 'utf8'),
  ) as { request: { object: unknown } }
).request.object;
const elsewhere = join(scratch, 'elsewhere');
const bin = join(prefix, 'bin', 'routability-webhook');
let tarballPath = '';

beforeAll(async () => {
  mkdirSync(elsewhere);
  const packed = await run('npm', ['pack', '--pack-destination', scratch, '--silent'], { cwd: REPO });
  expect(packed.code, packed.stderr).toBe(0);
  const tarball = `gateway-routability-webhook-${version}.tgz`;
  expect(readdirSync(scratch)).toContain(tarball);
  tarballPath = join(scratch, tarball);
  // As a user installs it: globally, here into a prefix of its own, from a folder that is not the clone.
  const installed = await run(
    'npm',
    [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      join(scratch, tarball),
    ],
    { cwd: elsewhere },
  );
  expect(installed.code, installed.stderr).toBe(0);
}, 300_000);

describe('the packed CLI, installed with npm install -g', () => {
  const env = { PATH: `${join(prefix, 'bin')}:${process.env['PATH']}` };

  it('routability-webhook --help lists the commands', async () => {
    const r = await run('routability-webhook', ['--help'], { cwd: elsewhere, env });
    expect(r.code, r.stderr).toBe(0);
    for (const command of ['serve', 'review', 'check', 'audit', 'crd-patch', 'certs'])
      expect(r.stdout).toContain(command);
  });

  it('check judges a manifest in the current folder', async () => {
    const review = readFileSync(
      join(REPO, 'test', 'fixtures', 'reviews', 'create-cluster-outside-range.json'),
      'utf8',
    );
    const gateway = (JSON.parse(review) as { request: { object: unknown } }).request.object;
    writeFileSync(join(elsewhere, 'gateway.json'), JSON.stringify(gateway));
    const r = await run(bin, ['check', '-f', 'gateway.json', '--service-cidr', '10.96.0.0/12'], {
      cwd: elsewhere,
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(
      /^gateway\.json:\d+:\d+: Gateway .*requires an address inside the service range \(10\.96\.0\.0\/12\)/m,
    );
  });

  it('review answers an AdmissionReview on stdin', async () => {
    const input = readFileSync(
      join(REPO, 'test', 'fixtures', 'reviews', 'create-cluster-outside-range.json'),
      'utf8',
    );
    const r = await run(bin, ['review', '--service-cidr', '10.96.0.0/12'], { cwd: elsewhere, input });
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { response: { allowed: boolean } }).response.allowed).toBe(false);
  });
});

describe('the kubectl plugin', () => {
  const env = { PATH: `${join(prefix, 'bin')}:${process.env['PATH']}` };

  it('kubectl-routability is the same CLI under the name kubectl looks for', async () => {
    writeFileSync(join(elsewhere, 'plugin-gateway.json'), JSON.stringify(GATEWAY));
    const r = await run(
      'kubectl-routability',
      ['check', '-f', 'plugin-gateway.json', '--service-cidr', '10.96.0.0/12'],
      {
        cwd: elsewhere,
        env,
      },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^plugin-gateway\.json:\d+:\d+: Gateway .*inside the service range/m);
  });

  // kubectl runs `kubectl-<name>` from PATH for `kubectl <name>`; where kubectl is installed, through it.
  const kubectl = (process.env['PATH'] ?? '').split(':').some((d) => existsSync(join(d, 'kubectl')));
  it.runIf(kubectl)('kubectl routability check -f … runs it through kubectl', async () => {
    writeFileSync(join(elsewhere, 'plugin-gateway.json'), JSON.stringify(GATEWAY));
    const r = await run(
      'kubectl',
      ['routability', 'check', '-f', 'plugin-gateway.json', '--service-cidr', '10.96.0.0/12'],
      {
        cwd: elsewhere,
        env,
      },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^plugin-gateway\.json:\d+:\d+: Gateway /m);
  });
});

describe('the krew plugin (.krew.yaml, scripts/krew-archive.mjs)', () => {
  const out = join(scratch, 'krew-out');
  // As krew installs a plugin: the archive unpacked into its store, the bin linked into its bin folder.
  const store = join(scratch, 'krew', 'store', 'routability', `v${version}`);
  const krewBin = join(scratch, 'krew', 'bin');

  beforeAll(async () => {
    const made = await run(
      process.execPath,
      [join(REPO, 'scripts', 'krew-archive.mjs'), tarballPath, out, `v${version}`],
      { cwd: elsewhere },
    );
    expect(made.code, made.stderr).toBe(0);
    mkdirSync(store, { recursive: true });
    mkdirSync(krewBin, { recursive: true });
    const unpacked = await run('tar', ['-xzf', join(out, 'kubectl-routability.tar.gz'), '-C', store], {
      cwd: elsewhere,
    });
    expect(unpacked.code, unpacked.stderr).toBe(0);
    symlinkSync(join(store, 'kubectl-routability'), join(krewBin, 'kubectl-routability'));
  }, 300_000);

  it('the manifest names the archive of this tag with its checksum, and the launcher as bin', () => {
    const manifest = parse(readFileSync(join(out, 'routability.yaml'), 'utf8')) as {
      kind: string;
      metadata: { name: string };
      spec: { version: string; platforms: { uri: string; sha256: string; bin: string }[] };
    };
    expect(manifest).toMatchObject({ kind: 'Plugin', metadata: { name: 'routability' } });
    expect(manifest.spec.version).toBe(`v${version}`);
    const [platform] = manifest.spec.platforms;
    expect(platform!.uri).toMatch(
      new RegExp(`/releases/download/v${version}/kubectl-routability\\.tar\\.gz$`),
    );
    const sha = createHash('sha256')
      .update(readFileSync(join(out, 'kubectl-routability.tar.gz')))
      .digest('hex');
    expect(platform!.sha256).toBe(sha);
    expect(existsSync(join(store, platform!.bin))).toBe(true);
  });

  it('the launcher, linked as krew links it, checks a manifest', async () => {
    writeFileSync(join(elsewhere, 'krew-gateway.json'), JSON.stringify(GATEWAY));
    const r = await run(
      join(krewBin, 'kubectl-routability'),
      ['check', 'krew-gateway.json', '--service-cidr', '10.96.0.0/12'],
      { cwd: elsewhere },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^krew-gateway\.json:\d+:\d+: Gateway /m);
  });
});

describe('the pre-commit hook (.pre-commit-hooks.yaml)', () => {
  interface Hook {
    id: string;
    entry: string;
    language: string;
    files: string;
    pass_filenames?: boolean;
  }
  const hooks = parse(readFileSync(join(REPO, '.pre-commit-hooks.yaml'), 'utf8')) as Hook[];
  const hook = hooks.find((h) => h.id === 'gateway-routability')!;
  const env = { PATH: `${join(prefix, 'bin')}:${process.env['PATH']}` };
  const staged = join(scratch, 'staged');

  /** As pre-commit runs a hook: the entry split into words, the hook's args, then the matching staged files. */
  function runHook(args: string[], files: string[]) {
    const matching = files.filter((f) => new RegExp(hook.files).test(f));
    const [cmd, ...words] = hook.entry.split(/\s+/);
    return run(cmd!, [...words, ...args, ...matching], { cwd: staged, env });
  }

  beforeAll(() => {
    mkdirSync(join(staged, 'deploy'), { recursive: true });
    writeFileSync(join(staged, 'deploy', 'bad.json'), JSON.stringify(GATEWAY));
    writeFileSync(
      join(staged, 'deploy', 'service.yaml'),
      'apiVersion: v1\nkind: Service\nmetadata: { name: web }\n',
    );
    writeFileSync(join(staged, 'README.md'), '# not a manifest\n');
  });

  it('is a node hook that passes file names and matches manifests only', () => {
    expect(hook).toMatchObject({ language: 'node', entry: 'routability-webhook check' });
    expect(hook.pass_filenames).not.toBe(false);
    const re = new RegExp(hook.files);
    expect(['a.yaml', 'b.yml', 'c.json', 'deploy/x.YAML'.toLowerCase()].every((f) => re.test(f))).toBe(true);
    expect(['README.md', 'yaml.txt', 'a.yaml.bak'].some((f) => re.test(f))).toBe(false);
  });

  it('fails the commit on a violation in a staged manifest, naming the file', async () => {
    const r = await runHook(
      ['--service-cidr', '10.96.0.0/12'],
      ['README.md', 'deploy/bad.json', 'deploy/service.yaml'],
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^deploy\/bad\.json:\d+:\d+: Gateway /m);
    expect(r.stdout).toMatch(/in 2 files: 1 violation/);
  });

  it('passes when the staged manifests are fine', async () => {
    const r = await runHook(['--service-cidr', '10.96.0.0/12'], ['README.md', 'deploy/service.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/in 1 file: 0 violations/);
  });

  it('without the service range as an argument it says what to add (exit 2)', async () => {
    const r = await runHook([], ['deploy/service.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the service ranges are required: give --service-cidr CIDR/);
  });
});
