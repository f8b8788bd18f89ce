/**
 * The commands a doc example may call, as executables in a folder put first on PATH:
 * `routability-webhook` (the built CLI), `helm` (test/docs/helm-shim.mjs: `install` and `upgrade`
 * become `helm template` with the same chart, values and flags, and a release's values are kept
 * between commands as helm keeps them, so the chart's schema and templates judge every documented
 * value and every pasted `helm upgrade` without a cluster) and `doc-rendered`, which hidden
 * `<!-- doctest: setup doc-rendered … -->` lines use to check what the last install or upgrade
 * rendered. Anything else runs as installed.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { helmBinary } from '../chart/helm.js';
import { REPO } from './markdown.js';

const require = createRequire(import.meta.url);

export const CLI = join(REPO, 'dist', 'cli', 'main.js');

export function writeShims(dir: string): { skipHelm?: string } {
  mkdirSync(dir, { recursive: true });
  const shim = (name: string, body: string) => {
    writeFileSync(join(dir, name), body);
    chmodSync(join(dir, name), 0o755);
  };
  shim('routability-webhook', `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`);
  const helm = helmBinary();
  if (!helm.path) return { skipHelm: helm.skipReason ?? 'no helm' };
  const env = `DOC_HELM='${helm.path}' DOC_YAML_MODULE='${require.resolve('yaml')}'`;
  const node = `'${process.execPath}' '${join(import.meta.dirname, 'helm-shim.mjs')}'`;
  shim('helm', `#!/bin/sh\n${env} exec ${node} "$@"\n`);
  shim('doc-rendered', `#!/bin/sh\n${env} exec ${node} --doc-rendered "$@"\n`);
  return {};
}
