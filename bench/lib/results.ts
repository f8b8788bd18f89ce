/** Where a benchmark's figures go: bench/results/NAME (git ignores them), dated. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../test/kit/server-process.js';

export function writeBenchResult(name: string, figures: object): void {
  const dir = join(repoRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, name),
    JSON.stringify({ date: new Date().toISOString(), ...figures }, null, 2) + '\n',
  );
}
