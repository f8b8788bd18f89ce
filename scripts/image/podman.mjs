// Runs podman the way this machine kind needs it: runc instead of the default crun (which cannot
// start containers here), and explicit ulimits on `run` (runc applies none of its own that fit).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { clearTimeout, setTimeout } from 'node:timers';

const runc = ['/usr/sbin/runc', '/usr/bin/runc'].find((p) => existsSync(p));
/** Global flags for every podman call; IMAGE_TEST_RUNTIME overrides the OCI runtime. */
export const globalFlags = () => {
  const runtime = process.env.IMAGE_TEST_RUNTIME ?? runc;
  return runtime ? ['--runtime', runtime] : [];
};

/**
 * Runs a command without blocking the event loop; resolves {code, stdout, stderr} (never rejects
 * on a non-zero exit). `echo` streams its output through as well, for long builds.
 */
export function run(cmd, args, { timeoutMs = 600_000, echo = false, env } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      if (echo) process.stderr.write(d);
    });
    child.stderr.on('data', (d) => {
      stderr += d;
      if (echo) process.stderr.write(d);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout, stderr: `${stderr}${err.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}

export const podman = (args, opts) => run('podman', [...globalFlags(), ...args], opts);

/** podman, throwing with its stderr on failure. */
export async function podmanOk(args, opts) {
  const r = await podman(args, opts);
  if (r.code !== 0)
    throw new Error(`podman ${args.slice(0, 2).join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
  return r.stdout;
}

/** ulimits for `podman run` under runc: within the machine's hard limit for open files. */
export async function ulimitFlags() {
  const r = await run('sh', ['-c', 'ulimit -Hn']);
  const hard = Number(r.stdout.trim());
  const nofile = Number.isFinite(hard) && hard > 0 ? Math.min(hard, 65536) : 1024;
  return ['--ulimit', `nofile=${nofile}:${nofile}`, '--ulimit', 'nproc=4096:4096'];
}
