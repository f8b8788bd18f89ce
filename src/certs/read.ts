/** Reads the CA an earlier `certs` run wrote, for `certs --renew`: present, a CA, not expired, its key. */
import { errorMessage } from '../error-text.js';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** The CA of an earlier run, for --renew; a message when it is not there or does not read. */
export async function readCa(outDir: string): Promise<{ cert: string; key: string } | string> {
  const missing: string[] = [];
  for (const n of ['ca.crt', 'ca.key']) if (!(await exists(join(outDir, n)))) missing.push(n);
  if (missing.length > 0)
    return `--renew needs ${missing.join(' and ')} in ${outDir} (written by an earlier certs run); without them run certs without --renew (a new CA: update caBundle too)`;
  const [cert, key] = await Promise.all([
    readFile(join(outDir, 'ca.crt'), 'utf8'),
    readFile(join(outDir, 'ca.key'), 'utf8'),
  ]);
  try {
    const ca = new X509Certificate(cert);
    if (!ca.ca) return `--renew: ${join(outDir, 'ca.crt')} is not a CA certificate`;
    if (new Date(ca.validTo).getTime() <= Date.now())
      return `--renew: the CA in ${join(outDir, 'ca.crt')} expired at ${new Date(ca.validTo).toISOString()}; run certs --force for a new CA and update caBundle`;
    if (!ca.checkPrivateKey(createPrivateKey(key)))
      return `--renew: ${join(outDir, 'ca.key')} is not the key of ca.crt`;
  } catch (err) {
    return `--renew: cannot read the CA in ${outDir}: ${errorMessage(err)}`;
  }
  return { cert, key };
}
