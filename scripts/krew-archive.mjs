#!/usr/bin/env node
// The krew archive of a release, and its plugin manifest from the template .krew.yaml.
//
// Usage: node scripts/krew-archive.mjs PACKAGE.tgz OUT_DIR TAG
//   PACKAGE.tgz  what `npm pack` wrote (prepack builds dist/)
//   OUT_DIR      gets kubectl-routability.tar.gz and routability.yaml (the filled-in manifest)
//   TAG          the release tag, e.g. v0.1.0
//
// The archive holds the package installed with its runtime dependencies (`npm install -g
// --prefix`, no dev dependencies) and a launcher, `kubectl-routability`, that krew links into its
// bin folder; the launcher follows that link back to the package, so it needs only `node`.
// The manifest is the template with `{{ .TagName }}` and `{{ addURIAndSha "URL" .TagName }}`
// filled in as krew's release tooling fills them (the URL's TagName too, and the archive's sha256).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const ARCHIVE = 'kubectl-routability.tar.gz';
const PACKAGE_NAME = 'gateway-routability-webhook';

const LAUNCHER = `#!/bin/sh
# krew links this file into its bin folder: follow the link back to the package beside it.
here=$(dirname "$(readlink -f "$0")")
exec node "$here/lib/node_modules/${PACKAGE_NAME}/dist/cli/main.js" "$@"
`;

/** Fills the template: the tag, and each addURIAndSha with its URL and the archive's checksum. */
export function renderManifest(template, tag, sha256) {
  return template
    .replace(/\{\{\s*addURIAndSha\s+"([^"]+)"\s+\.TagName\s*\}\}/g, (_, url) => {
      const uri = url.replace(/\{\{\s*\.TagName\s*\}\}/g, tag);
      return `uri: ${uri}\n      sha256: ${sha256}`;
    })
    .replace(/\{\{\s*\.TagName\s*\}\}/g, tag);
}

export function krewArchive(tarball, outDir, tag) {
  if (!/^v\d+\.\d+\.\d+/.test(tag)) throw new Error(`tag ${tag} is not vX.Y.Z`);
  const staging = mkdtempSync(join(tmpdir(), 'krew-'));
  try {
    execFileSync(
      'npm',
      ['install', '-g', '--prefix', staging, '--omit=dev', '--no-audit', '--no-fund', resolve(tarball)],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    // The prefix's own bin links point into this folder; the launcher replaces them.
    rmSync(join(staging, 'bin'), { recursive: true, force: true });
    writeFileSync(join(staging, 'kubectl-routability'), LAUNCHER);
    chmodSync(join(staging, 'kubectl-routability'), 0o755);
    mkdirSync(outDir, { recursive: true });
    const archive = join(resolve(outDir), ARCHIVE);
    execFileSync('tar', ['-czf', archive, '-C', staging, '.']);
    const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');
    const template = readFileSync(join(REPO, '.krew.yaml'), 'utf8');
    writeFileSync(join(outDir, 'routability.yaml'), renderManifest(template, tag, sha256));
    return { archive, sha256 };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [tarball, outDir, tag] = process.argv.slice(2);
  if (!tarball || !outDir || !tag) {
    console.error('usage: node scripts/krew-archive.mjs PACKAGE.tgz OUT_DIR TAG');
    process.exit(2);
  }
  const { archive, sha256 } = krewArchive(tarball, outDir, tag);
  console.log(`${archive} ${sha256}`);
}
