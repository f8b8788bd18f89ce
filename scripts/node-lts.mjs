#!/usr/bin/env node
// The Node.js release the image ships and CI tests on, and a way to get that binary without a
// system install: the npm registry (the only network CI has) publishes each official build as
// `node-<platform>-<arch>@<version>`, whose package/bin/node is the binary from nodejs.org.
//
// Usage: `node scripts/node-lts.mjs` prints the folder holding that `node` (put it first on PATH);
// `node scripts/node-lts.mjs --version` prints the version. Cached under .cache/node/ (gitignored).
//
// The tarball must hash to the sha512 pinned for it in scripts/pinned.mjs (x64 and arm64 Linux are
// pinned; another platform is refused with a message saying so).
//
// Bumping: change NODE_VERSION and its pins in scripts/pinned.mjs (the Dockerfile's base tag
// follows NODE_MAJOR; a test keeps them equal).

import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { extractFromTar } from './ensure-helm.mjs';
import { npmPackVerified } from './pinned.mjs';

export const NODE_VERSION = '24.22.3';
export const NODE_MAJOR = Number(NODE_VERSION.split('.')[0]);

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Folder that holds the cached `node` of NODE_VERSION for this platform. */
export function nodeBinDir(version = NODE_VERSION) {
  return join(repoRoot, '.cache', 'node', `v${version}-${process.platform}-${process.arch}`, 'bin');
}

function versionOf(binary) {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 20_000 }).trim();
  } catch {
    return undefined;
  }
}

/** Returns the folder holding a working `node` of `version`, fetching it once. */
export function ensureNode({ version = NODE_VERSION, log = (msg) => process.stderr.write(`${msg}\n`) } = {}) {
  const bin = nodeBinDir(version);
  const node = join(bin, 'node');
  if (existsSync(node) && versionOf(node) === `v${version}`) return bin;
  const spec = `node-${process.platform}-${process.arch}@${version}`;
  log(`fetching ${spec} from the npm registry into ${bin}`);
  mkdirSync(bin, { recursive: true });
  // A private download folder: parallel callers never see each other's half-written files.
  const work = mkdtempSync(join(dirname(bin), 'download-'));
  try {
    const tar = gunzipSync(readFileSync(npmPackVerified(spec, work)));
    const tmp = join(work, 'node');
    writeFileSync(tmp, extractFromTar(tar, 'package/bin/node'));
    chmodSync(tmp, 0o755);
    renameSync(tmp, node);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const got = versionOf(node);
  if (got !== `v${version}`) throw new Error(`${node} reports ${got ?? 'nothing'}, expected v${version}`);
  return bin;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--version')) {
    process.stdout.write(`${NODE_VERSION}\n`);
  } else {
    try {
      process.stdout.write(`${ensureNode()}\n`);
    } catch (err) {
      process.stderr.write(`node-lts: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    }
  }
}
