/** Temporary folders and certificate files for servers under test (key material: delete it after). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCertificates, type GeneratedCertificates } from '../../src/certs/generate.js';

/** Certificates written in-process (writeCerts). */
export interface CertFiles {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  generated: GeneratedCertificates;
  /** Deletes the folder and the private keys in it (call it in afterAll/afterEach). */
  remove(): void;
}

/** Certificates written by the CLI's `certs` command (makeCerts). */
export interface CertPaths {
  readonly dir: string;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** A temporary folder for key material; delete it with removeDir in afterAll/afterEach. */
export function keyDir(prefix = 'rw-certs-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export async function tempDir(prefix: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export async function writeCerts(dir = keyDir()): Promise<CertFiles> {
  const generated = await generateCertificates({ service: 'gateway-routability-webhook', namespace: 'test' });
  const files = {
    caFile: join(dir, 'ca.crt'),
    certFile: join(dir, 'tls.crt'),
    keyFile: join(dir, 'tls.key'),
  };
  writeFileSync(files.caFile, generated.caCert);
  writeFileSync(files.certFile, generated.cert);
  writeFileSync(files.keyFile, generated.key);
  return { dir, ...files, generated, remove: () => removeDir(dir) };
}
