/**
 * The commands a doc example may call, as executables in a folder put first on PATH:
 * `routability-webhook` (the built CLI) and `helm` (the real helm; `install` and `upgrade --install`
 * become `helm template` with the same chart, values and flags, so the chart's schema and templates
 * judge every documented value without a cluster). Anything else runs as installed.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { helmBinary } from '../chart/helm.js';
import { REPO } from './markdown.js';

export const CLI = join(REPO, 'dist', 'cli', 'main.js');

/** Flags of `helm install`/`upgrade` that `helm template` does not take or that need a cluster. */
const HELM_DROP_FLAGS = ['--create-namespace', '--install', '--reuse-values', '--wait', '--atomic'];

export function writeShims(dir: string): { skipHelm?: string } {
  mkdirSync(dir, { recursive: true });
  const shim = (name: string, body: string) => {
    writeFileSync(join(dir, name), body);
    chmodSync(join(dir, name), 0o755);
  };
  shim('routability-webhook', `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`);
  const helm = helmBinary();
  if (!helm.path) return { skipHelm: helm.skipReason ?? 'no helm' };
  const js = `
const { spawnSync } = require('node:child_process');
const args = process.argv.slice(2);
const drop = ${JSON.stringify(HELM_DROP_FLAGS)};
if (args[0] === 'install' || args[0] === 'upgrade') args[0] = 'template';
const kept = args.filter((a) => !drop.includes(a));
const r = spawnSync(${JSON.stringify(helm.path)}, kept, { stdio: ['inherit', 'ignore', 'inherit'] });
process.exit(r.status ?? 1);
`;
  writeFileSync(join(dir, 'helm-shim.cjs'), js);
  shim('helm', `#!/bin/sh\nexec '${process.execPath}' '${join(dir, 'helm-shim.cjs')}' "$@"\n`);
  return {};
}
