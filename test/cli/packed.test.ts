/**
 * The CLI on a workstation: the package `npm pack` makes installs with
 * `npm install -g` (here into a temporary prefix), and the installed
 * `routability-webhook` answers --help, check and review from a folder that is
 * not the clone.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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
const elsewhere = join(scratch, 'elsewhere');
const bin = join(prefix, 'bin', 'routability-webhook');

beforeAll(async () => {
  mkdirSync(elsewhere);
  const packed = await run('npm', ['pack', '--pack-destination', scratch, '--silent'], { cwd: REPO });
  expect(packed.code, packed.stderr).toBe(0);
  const tarball = `gateway-routability-webhook-${version}.tgz`;
  expect(readdirSync(scratch)).toContain(tarball);
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
