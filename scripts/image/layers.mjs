// Every file of every layer of an image, read from `podman save` (a docker-archive: manifest.json
// naming one tar per layer). Checks on the layers, not on the merged view: a file deleted in a
// later layer still ships in the earlier one.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { podmanOk, run } from './podman.mjs';

export async function imageLayers(ref) {
  const dir = mkdtempSync(join(tmpdir(), 'image-layers-'));
  try {
    const archive = join(dir, 'image.tar');
    await podmanOk(['save', '--format', 'docker-archive', '-o', archive, ref], { timeoutMs: 300_000 });
    const x = await run('tar', ['-xf', archive, '-C', dir, '--exclude=*/layer.tar.gz']);
    if (x.code !== 0) throw new Error(`cannot unpack ${archive}: ${x.stderr}`);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    const layers = [];
    for (const layer of manifest[0].Layers) {
      const list = await run('tar', ['-tf', join(dir, layer)], { timeoutMs: 120_000 });
      if (list.code !== 0) throw new Error(`cannot list layer ${layer}: ${list.stderr}`);
      const files = list.stdout
        .split('\n')
        .filter(Boolean)
        .map((f) => f.replace(/^\.?\//, ''));
      layers.push({ id: layer, files });
    }
    return layers;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Installed package folders (`node_modules/a`, `node_modules/@s/b/node_modules/c`) among the files. */
export function installedPackages(files, root) {
  const found = new Set();
  const prefix = `${root}/`;
  for (const f of files) {
    if (!f.startsWith(prefix) || !f.endsWith('/package.json')) continue;
    const rel = f.slice(prefix.length, -'/package.json'.length);
    // A package root: the path ends in node_modules/<name> or node_modules/@scope/<name>.
    if (/(^|\/)node_modules\/(@[^/]+\/)?[^/@][^/]*$/.test(rel)) found.add(rel);
  }
  return found;
}
