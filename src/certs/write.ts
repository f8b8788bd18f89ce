/** Writes generated certificates in the layout `serve` and the chart expect: ca.crt, tls.crt, tls.key (+ ca.key). */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GeneratedCertificates } from './generate.js';

/** Returns the paths written. Keys get mode 0600; the dev server needs no CA key, so it is optional. */
export async function writeCertificateFiles(
  dir: string,
  generated: GeneratedCertificates,
  options: { caKey: boolean },
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files: [string, string, number][] = [
    ['ca.crt', generated.caCert, 0o644],
    ...(options.caKey ? [['ca.key', generated.caKey, 0o600] as [string, string, number]] : []),
    ['tls.crt', generated.cert, 0o644],
    ['tls.key', generated.key, 0o600],
  ];
  for (const [name, content, mode] of files) await writeFile(join(dir, name), content, { mode });
  return files.map(([name]) => join(dir, name));
}
