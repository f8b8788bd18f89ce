// A folder laid out the way the kubelet lays out a Secret volume, so the server meets the same
// symlinks it meets in a pod:
//   ..2026_12_01_10_00_00.000000001/tls.crt   the data, one timestamped folder per version
//   ..data -> ..2026_12_01_10_00_00.000000001  swapped atomically (rename) on every update
//   tls.crt -> ..data/tls.crt                   the names the container opens
// Files are owned by root and the pod's fsGroup with the volume's defaultMode, as the kubelet sets them.
import { Buffer } from 'node:buffer';
import { X509Certificate } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { run } from './podman.mjs';

async function openssl(args, cwd) {
  const r = await run('sh', ['-c', `cd "${cwd}" && openssl ${args}`]);
  if (r.code !== 0) throw new Error(`openssl ${args.split(' ')[0]} failed: ${r.stderr.trim()}`);
}

/** A CA, and a function that issues serving certificates for `dnsName` from it (EC P-256, 1 day). */
export async function makeCa(workDir) {
  mkdirSync(workDir, { recursive: true });
  await openssl(
    'req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt -days 1 -subj /CN=image-test-ca',
    workDir,
  );
  let serial = 0;
  return {
    caPem: readFileSync(join(workDir, 'ca.crt')),
    async issue(dnsName) {
      serial += 1;
      const name = `leaf${serial}`;
      writeFileSync(
        join(workDir, `${name}.ext`),
        `subjectAltName=DNS:${dnsName}\nextendedKeyUsage=serverAuth\n`,
      );
      await openssl(
        `req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ${name}.key -out ${name}.csr -subj /CN=${dnsName}`,
        workDir,
      );
      await openssl(
        `x509 -req -in ${name}.csr -CA ca.crt -CAkey ca.key -set_serial ${1000 + serial} -days 1 -out ${name}.crt -extfile ${name}.ext`,
        workDir,
      );
      const cert = readFileSync(join(workDir, `${name}.crt`));
      return {
        'tls.crt': cert,
        'tls.key': readFileSync(join(workDir, `${name}.key`)),
        'ca.crt': readFileSync(join(workDir, 'ca.crt')),
        fingerprint: new X509Certificate(cert).fingerprint256,
      };
    },
  };
}

/** Writes a Secret volume into `dir` and returns {update(files)} to swap in new contents. */
export function secretVolume(dir, { uid = 0, gid = 0, mode = 0o644 } = {}) {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  let version = 0;
  const write = (files) => {
    version += 1;
    const stamp = new Date().toISOString().replace(/[-:T]/g, '_').replace(/\..*$/, '');
    const data = `..${stamp}.${String(version).padStart(9, '0')}`;
    mkdirSync(join(dir, data), { mode: 0o755 });
    for (const [key, value] of Object.entries(files)) {
      if (!Buffer.isBuffer(value)) continue;
      const path = join(dir, data, key);
      writeFileSync(path, value);
      chownSync(path, uid, gid);
      chmodSync(path, mode);
    }
    const old = readdirSync(dir).filter((e) => e.startsWith('..') && e !== '..data' && e !== data);
    symlinkSync(data, join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    for (const key of Object.keys(files)) {
      if (!Buffer.isBuffer(files[key])) continue;
      try {
        symlinkSync(join('..data', key), join(dir, key));
      } catch (err) {
        if (err.code !== 'EEXIST') throw err;
      }
    }
    for (const entry of old) rmSync(join(dir, entry), { recursive: true, force: true });
  };
  return { update: write };
}
