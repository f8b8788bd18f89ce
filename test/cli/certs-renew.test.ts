/**
 * `certs` says when what it wrote expires and how to renew it; `certs --renew` signs a new serving
 * certificate with the CA already there, so the caBundle the apiserver trusts stays valid.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { main } from '../../src/cli/main.js';
import { runCli } from '../crd/run-cli.js';

function certs(dir: string, args: readonly string[]) {
  return runCli(main, ['certs', '--out-dir', 'out', '--namespace', 'gw', ...args], { cwd: dir });
}

function workdir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rw-certs-renew-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const read = (dir: string, name: string) => readFileSync(join(dir, 'out', name), 'utf8');
const DAY = 86_400_000;

describe('certs: validity and renewal', () => {
  it('prints the notAfter of the serving certificate and of the CA, and the renew command', async () => {
    const dir = workdir();
    const r = await certs(dir, ['--days', '90', '--ca-days', '1000']);
    expect(r.code).toBe(0);
    const leaf = new X509Certificate(read(dir, 'tls.crt'));
    const ca = new X509Certificate(read(dir, 'ca.crt'));
    expect(r.stdout).toContain(
      `serving certificate valid until ${new Date(leaf.validTo).toISOString()} (89 days)`,
    );
    expect(r.stdout).toContain(`CA (new) valid until ${new Date(ca.validTo).toISOString()} (999 days)`);
    expect(r.stdout).toContain(
      'renew before then: routability-webhook certs --renew --out-dir out --service gateway-routability-webhook --namespace gw',
    );
    expect(Math.round((new Date(leaf.validTo).getTime() - Date.now()) / DAY)).toBe(90);
  });

  it('--renew: a new serving certificate signed by the same CA, the CA files unchanged', async () => {
    const dir = workdir();
    await certs(dir, ['--days', '30']);
    const [caBefore, caKeyBefore, leafBefore] = [
      read(dir, 'ca.crt'),
      read(dir, 'ca.key'),
      read(dir, 'tls.crt'),
    ];
    const r = await certs(dir, ['--renew', '--days', '60']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('CA (reused)');
    expect(read(dir, 'ca.crt')).toBe(caBefore);
    expect(read(dir, 'ca.key')).toBe(caKeyBefore);
    expect(read(dir, 'tls.crt')).not.toBe(leafBefore);
    const leaf = new X509Certificate(read(dir, 'tls.crt'));
    expect(leaf.verify(new X509Certificate(caBefore).publicKey)).toBe(true);
    expect(leaf.subjectAltName).toContain('DNS:gateway-routability-webhook.gw.svc');
    expect(Math.round((new Date(leaf.validTo).getTime() - Date.now()) / DAY)).toBe(60);
  });

  it('--renew never outlives the CA', async () => {
    const dir = workdir();
    await certs(dir, ['--days', '10', '--ca-days', '20']);
    const r = await certs(dir, ['--renew', '--days', '365']);
    expect(r.code).toBe(0);
    const leaf = new X509Certificate(read(dir, 'tls.crt'));
    expect(new Date(leaf.validTo).getTime()).toBeLessThanOrEqual(
      new Date(new X509Certificate(read(dir, 'ca.crt')).validTo).getTime(),
    );
  });

  it("--renew refuses a missing CA, a key that is not the CA's, or a certificate that is not a CA", async () => {
    const dir = workdir();
    const none = await certs(dir, ['--renew']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /--renew needs ca\.crt and ca\.key in .*out \(written by an earlier certs run\)/,
    );
    await certs(dir, []);
    const other = workdir();
    await certs(other, []);
    writeFileSync(join(dir, 'out', 'ca.key'), readFileSync(join(other, 'out', 'ca.key')));
    const wrongKey = await certs(dir, ['--renew']);
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.stderr).toMatch(/ca\.key is not the key of ca\.crt/);
    writeFileSync(join(dir, 'out', 'ca.crt'), readFileSync(join(dir, 'out', 'tls.crt')));
    const notCa = await certs(dir, ['--renew']);
    expect(notCa.stderr).toMatch(/ca\.crt is not a CA certificate/);
  });
});
