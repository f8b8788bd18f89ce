/** `certs --force` replaces files: new modes, new inodes, never writing through a symlink. */
import {
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GeneratedCertificates } from '../../src/certs/generate.js';
import { writeCertificateFiles } from '../../src/certs/write.js';

const generated = {
  caCert: 'CA CERT\n',
  caKey: 'CA KEY\n',
  cert: 'LEAF CERT\n',
  key: 'LEAF KEY\n',
} as unknown as GeneratedCertificates;

describe('writeCertificateFiles over existing files', () => {
  it('gives keys mode 0600 even where a 0644 file was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rw-write-'));
    for (const name of ['ca.crt', 'ca.key', 'tls.crt', 'tls.key'])
      writeFileSync(join(dir, name), 'old', { mode: 0o644 });
    await writeCertificateFiles(dir, generated, { caKey: true });
    expect(statSync(join(dir, 'tls.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'ca.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'tls.crt')).mode & 0o777).toBe(0o644);
    expect(readFileSync(join(dir, 'tls.key'), 'utf8')).toBe('LEAF KEY\n');
    expect(readdirSync(dir).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
  });

  it('replaces a symlink instead of writing into its target', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rw-write-'));
    const elsewhere = join(mkdtempSync(join(tmpdir(), 'rw-target-')), 'precious');
    writeFileSync(elsewhere, 'do not touch', { mode: 0o644 });
    symlinkSync(elsewhere, join(dir, 'tls.key'));
    await writeCertificateFiles(dir, generated, { caKey: false });
    expect(readFileSync(elsewhere, 'utf8')).toBe('do not touch');
    expect(statSync(elsewhere).mode & 0o777).toBe(0o644);
    expect(lstatSync(join(dir, 'tls.key')).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(dir, 'tls.key'), 'utf8')).toBe('LEAF KEY\n');
  });
});
