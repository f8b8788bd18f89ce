/**
 * Runs before every test file (vitest setupFiles). No test may reach the
 * cluster of the machine it runs on, nor be steered by the shell it was started
 * from: each test file gets an empty HOME of its own (so ~/.kube/config is
 * never found, and helm's caches stay inside it), no KUBECONFIG, no in-cluster
 * service variables and no ROUTABILITY_WEBHOOK_* flags. Child processes inherit
 * this scrubbed environment; the empty HOME is deleted after the file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** Variables that would point a cluster client at a real cluster. */
const CLUSTER_VARIABLES = ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'];

for (const name of Object.keys(process.env)) {
  if (name.startsWith('ROUTABILITY_WEBHOOK_') || CLUSTER_VARIABLES.includes(name)) delete process.env[name];
}

const home = mkdtempSync(join(tmpdir(), 'rw-test-home-'));
process.env['HOME'] = home;
// Tools that look up XDG folders before HOME (helm) stay inside it too.
process.env['XDG_CONFIG_HOME'] = join(home, '.config');
process.env['XDG_CACHE_HOME'] = join(home, '.cache');
process.env['XDG_DATA_HOME'] = join(home, '.local', 'share');

/** The HOME every test of this file sees (tests assert they run inside it). */
export const ISOLATED_HOME = home;

afterAll(() => {
  rmSync(home, { recursive: true, force: true });
});
