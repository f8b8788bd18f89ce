/**
 * The read-only fixtures beside the clone (../shared/fixtures): a clone of the
 * project alone does not have them, so outside CI a test that needs them is
 * skipped with a message saying why. CI always has them (CI=true), and there
 * their absence is a broken set-up that must fail the run, not a skip that
 * hides every check built on them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * ../shared/fixtures from the clone; SHARED_FIXTURES_DIR names it for a copy of
 * the tests that runs elsewhere (Stryker's sandbox under .cache/ sets it).
 */
export const SHARED_FIXTURES =
  process.env['SHARED_FIXTURES_DIR'] ?? fileURLToPath(new URL('../../../shared/fixtures/', import.meta.url));

/** The path under ../shared/fixtures, and whether every one of `needed` (default: it) exists. */
export function sharedFixture(
  relativePath: string,
  needed: readonly string[] = [''],
): { readonly path: string; readonly present: boolean } {
  const path = join(SHARED_FIXTURES, relativePath);
  const missing = needed.map((n) => join(path, n)).filter((p) => !existsSync(p));
  if (missing.length === 0) return { path, present: true };
  const message = `${missing.join(', ')} not found (../shared/fixtures is not part of the repository)`;
  if (process.env['CI'] === 'true') throw new Error(`CI=true but ${message}`);
  console.warn(`skipped: ${message}`);
  return { path, present: false };
}
