/** Writes generated certificates in the layout `serve` and the chart expect: ca.crt, tls.crt, tls.key (+ ca.key). */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { GeneratedCertificates } from './generate.js';

/**
 * Replaces `path` with `content`: written to a new file beside it, then renamed
 * over it. An existing file keeps neither its old mode nor its inode, and a
 * symlink at `path` is replaced itself, never written through. The temporary
 * name is created exclusively, so a link planted there is refused too.
 */
async function replaceFile(path: string, content: string, mode: number): Promise<void> {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temporary, 'wx', mode);
  try {
    await handle.writeFile(content);
    // The creation mode passes through the umask; set it exactly.
    await handle.chmod(mode);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temporary, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
}

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
  for (const [name, content, mode] of files) await replaceFile(join(dir, name), content, mode);
  return files.map(([name]) => join(dir, name));
}
