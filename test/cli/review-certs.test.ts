/** `review` prints exactly the server's answer; `certs` writes what the apiserver needs. */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CommandIO } from '../../src/io.js';
import { post, testApp } from '../kit/app.js';
import { runCli } from '../kit/server-process.js';

function io(input = '', cwd = process.cwd()) {
  const stdin = new PassThrough();
  stdin.end(input);
  const out = { stdout: '', stderr: '' };
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const commandIO: CommandIO = { stdin, stdout, stderr, env: {}, cwd };
  return { commandIO, out };
}

const reviews = join(import.meta.dirname, '..', 'fixtures', 'reviews');
const RULE_ARGS = ['--service-cidr', '10.96.0.0/12,fd00:10:96::/112'];
const { app } = testApp();
afterAll(() => app.close());

describe('review', () => {
  for (const name of [
    'create-several-violations',
    'status-defaulting',
    'update-ratcheted',
    'v1beta1-review',
  ]) {
    for (const webhook of ['validate', 'mutate'] as const) {
      it(`${name} via ${webhook} answers exactly as the server does`, async () => {
        const text = readFileSync(join(reviews, `${name}.json`), 'utf8');
        const { commandIO, out } = io(text);
        const code = await main(['review', '--webhook', webhook, ...RULE_ARGS], commandIO);
        expect(code).toBe(0);
        const server = await post(app, `/${webhook}`, text);
        expect(JSON.parse(out.stdout)).toEqual(server.json());
      });
    }
  }

  it.each([
    ['', /stdin is empty/],
    ['{"not":', /stdin is not valid JSON/],
    ['{"kind":"Pod"}', /not an AdmissionReview/],
  ])('unreadable input %j exits 2 with a clear message', async (input, message) => {
    const { commandIO, out } = io(input);
    expect(await main(['review', ...RULE_ARGS], commandIO)).toBe(2);
    expect(out.stderr).toMatch(message);
  });

  it('needs the service range', async () => {
    const { commandIO, out } = io('{}');
    expect(await main(['review'], commandIO)).toBe(2);
    expect(out.stderr).toMatch(/--service-cidr is required/);
  });

  it('exits 0 for a denial: the decision is in the output', async () => {
    const result = await runCli(['review', ...RULE_ARGS], {
      input: readFileSync(join(reviews, 'create-case-slip.json'), 'utf8'),
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).response.allowed).toBe(false);
  });
});

describe('certs', () => {
  it('writes a CA and a serving certificate with the SANs the apiserver checks, keys private', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rw-certs-cli-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const { commandIO, out } = io('', dir);
    const code = await main(
      ['certs', '--out-dir', 'out', '--service', 'rw', '--namespace', 'gw-system', '--extra-san', '10.0.0.1'],
      commandIO,
    );
    expect(code).toBe(0);
    expect(out.stdout).toMatch(
      /SANs: rw, rw\.gw-system, rw\.gw-system\.svc, rw\.gw-system\.svc\.cluster\.local, localhost, 127\.0\.0\.1, 10\.0\.0\.1/,
    );
    const leaf = new X509Certificate(readFileSync(join(dir, 'out', 'tls.crt')));
    const ca = new X509Certificate(readFileSync(join(dir, 'out', 'ca.crt')));
    expect(leaf.subjectAltName).toContain('DNS:rw.gw-system.svc');
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(statSync(join(dir, 'out', 'tls.key')).mode & 0o077).toBe(0);
    expect(statSync(join(dir, 'out', 'ca.key')).mode & 0o077).toBe(0);

    const again = io('', dir);
    expect(await main(['certs', '--out-dir', 'out'], again.commandIO)).toBe(2);
    expect(again.out.stderr).toMatch(/already has ca\.crt, ca\.key, tls\.crt, tls\.key; use --force/);
  });
});

describe('the dispatcher', () => {
  it('lists commands and refuses unknown ones', async () => {
    const none = io();
    expect(await main([], none.commandIO)).toBe(2);
    expect(none.out.stderr).toMatch(/Usage: routability-webhook <command>/);
    const unknown = io();
    expect(await main(['frobnicate'], unknown.commandIO)).toBe(2);
    expect(unknown.out.stderr).toMatch(/unknown command "frobnicate"/);
    const help = io();
    expect(await main(['--help'], help.commandIO)).toBe(0);
    expect(help.out.stdout).toMatch(/serve +run the HTTPS admission webhook/);
  });

  it('every command has --help listing its flags with their environment variables', async () => {
    for (const command of ['serve', 'review', 'certs']) {
      const h = io();
      expect(await main([command, '--help'], h.commandIO)).toBe(0);
      expect(h.out.stdout).toMatch(new RegExp(`Usage: routability-webhook ${command}`));
      expect(h.out.stdout).toMatch(/\[env ROUTABILITY_WEBHOOK_[A-Z_]+\]/);
    }
  });
});
