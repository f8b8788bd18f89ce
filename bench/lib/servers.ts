/**
 * Child processes for benchmarks and reliability tests: the built webhook
 * (`dist/cli/main.js serve`) and the baseline server. stdout goes to a file,
 * as a container runtime would take it, so reading the logs never costs the
 * load generator's event loop anything; the file is polled for the
 * `listening` line.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository root, whether running from bench/ (vitest) or its compiled copy. */
export function repoRoot(): string {
  let dir = fileURLToPath(new URL('.', import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'src'))) return dir;
    dir = resolve(dir, '..');
  }
  throw new Error('cannot find the repository root from ' + import.meta.url);
}

/** Writes a benchmark's figures to bench/results/NAME (git ignores them), dated. */
export function writeBenchResult(name: string, figures: object): void {
  const dir = join(repoRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, name),
    JSON.stringify({ date: new Date().toISOString(), ...figures }, null, 2) + '\n',
  );
}

export const CLI = () => join(repoRoot(), 'dist', 'cli', 'main.js');
export const SERVICE_CIDRS = '10.96.0.0/12,fd00:10:96::/112';

export interface CertFiles {
  readonly dir: string;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** `routability-webhook certs --out-dir DIR --force`. */
export async function makeCerts(dir: string, extraArgs: readonly string[] = []): Promise<CertFiles> {
  await run(process.execPath, [CLI(), 'certs', '--out-dir', dir, '--force', ...extraArgs], {
    timeout: 30_000,
  });
  return { dir, ca: join(dir, 'ca.crt'), cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
}

export async function tempDir(prefix: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export interface Child {
  readonly process: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly healthPort: number | undefined;
  /** ms from spawn to the `listening` line. */
  readonly listeningAfterMs: number;
  readonly spawnedAt: number;
  readonly logFile: string;
  /** Resolves with the exit code/signal; never rejects. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  logs(): string[];
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

interface SpawnOptions {
  readonly args: readonly string[];
  readonly logFile: string;
  readonly nodeArgs?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  /** Parses a log line; returns ports once it is the listening line. */
  readonly listening: (line: Record<string, unknown>) => { port: number; healthPort?: number } | undefined;
  /** Another way to learn that the child listens, tried on every poll. */
  readonly poll?: () => Promise<{ port: number; healthPort?: number } | undefined>;
  /** CPU list (taskset -c) the child and all its threads run on; absent: any. */
  readonly cpus?: string | undefined;
  /** A command node runs under, in the same process (e.g. valgrind and its options). */
  readonly wrap?: readonly string[] | undefined;
}

function parseLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a partial last line
    }
  }
  return out;
}

async function spawnChild(opts: SpawnOptions): Promise<Child> {
  const fd = openSync(opts.logFile, 'w');
  const spawnedAt = performance.now();
  const argv = [...(opts.wrap ?? []), process.execPath, ...(opts.nodeArgs ?? []), ...opts.args];
  // taskset execs node in the same process: the pid stays the server's.
  const [command, ...args] = opts.cpus ? ['taskset', '-c', opts.cpus, ...argv] : argv;
  const child = spawn(command!, args, {
    stdio: ['ignore', fd, fd],
    env: opts.env ?? process.env,
  });
  closeSync(fd);
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((done) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal, at: performance.now() };
      done(exitInfo);
    });
    child.once('error', () => {
      exitInfo = { code: null, signal: null, at: performance.now() };
      done(exitInfo);
    });
  });
  const logs = () =>
    existsSync(opts.logFile) ? readFileSync(opts.logFile, 'utf8').split('\n').filter(Boolean) : [];
  const stop = async (graceMs = 5_000) => {
    if (exitInfo) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  // Well under a second on an idle machine; generous for a loaded, shared one.
  const deadline = spawnedAt + (opts.timeoutMs ?? 45_000);
  for (;;) {
    const polled = opts.poll ? await opts.poll() : undefined;
    for (const line of polled ? [{}] : parseLines(logs().join('\n'))) {
      const ports = polled ?? opts.listening(line);
      if (ports) {
        return {
          process: child,
          pid: child.pid!,
          port: ports.port,
          healthPort: ports.healthPort,
          listeningAfterMs: performance.now() - spawnedAt,
          spawnedAt,
          logFile: opts.logFile,
          exited,
          logs,
          stop,
        };
      }
    }
    if (exitInfo || performance.now() > deadline) {
      await stop(500);
      throw new Error(
        `server did not start (exit ${JSON.stringify(exitInfo)}):\n${logs().slice(-20).join('\n')}`,
      );
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

export interface WebhookOptions {
  readonly certs: Pick<CertFiles, 'cert' | 'key'>;
  readonly logFile: string;
  /** Default: `--service-cidr` with both families. */
  readonly extraArgs?: readonly string[];
  readonly serviceCidrs?: string | undefined;
  readonly logLevel?: string;
  readonly nodeArgs?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** Another build's dist/cli/main.js (to compare builds); default this repository's. */
  readonly cli?: string;
  /** How long the child may take to listen (default 15 s). */
  readonly timeoutMs?: number;
  /** CPU list (taskset -c) to pin the server to. */
  readonly cpus?: string | undefined;
  /** A command node runs under, in the same process (e.g. valgrind and its options). */
  readonly wrap?: readonly string[] | undefined;
}

/** A port that was free a moment ago (for runs whose log level hides the `listening` line). */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createNetServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      server.close(() => done(port));
    });
  });
}

/**
 * `node dist/cli/main.js serve … --port 0 --health-port 0`. Above `info` the
 * `listening` line is not logged: then free ports are picked here and the child
 * counts as started once /healthz answers.
 */
export async function spawnWebhook(opts: WebhookOptions): Promise<Child> {
  const cidrs = opts.serviceCidrs === undefined ? SERVICE_CIDRS : opts.serviceCidrs;
  const quiet = ['warn', 'error', 'fatal'].includes(opts.logLevel ?? 'info');
  const ports = quiet ? { port: await freePort(), healthPort: await freePort() } : { port: 0, healthPort: 0 };
  let healthy = false;
  return spawnChild({
    args: [
      opts.cli ?? process.env['BENCH_WEBHOOK_CLI'] ?? CLI(),
      'serve',
      ...(cidrs ? ['--service-cidr', cidrs] : []),
      '--tls-cert-file',
      opts.certs.cert,
      '--tls-private-key-file',
      opts.certs.key,
      '--port',
      String(ports.port),
      '--health-port',
      String(ports.healthPort),
      '--log-level',
      opts.logLevel ?? 'info',
      ...(opts.extraArgs ?? []),
    ],
    logFile: opts.logFile,
    nodeArgs: opts.nodeArgs,
    env: opts.env,
    cpus: opts.cpus,
    wrap: opts.wrap,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    listening: (line) =>
      line['msg'] === 'listening' && typeof line['port'] === 'number'
        ? { port: line['port'], healthPort: line['healthPort'] as number }
        : undefined,
    ...(quiet
      ? {
          poll: async () => {
            if (!healthy) healthy = (await httpStatus(ports.healthPort, '/healthz', 200)) === 200;
            return healthy ? ports : undefined;
          },
        }
      : {}),
  });
}

/** The baseline server: bench/baseline-server.ts, compiled next to this module. */
export function spawnBaseline(opts: {
  certs: Pick<CertFiles, 'cert' | 'key'>;
  logFile: string;
  script: string;
  nodeArgs?: readonly string[];
  /** More arguments for the script. */
  args?: readonly string[];
  cpus?: string | undefined;
  wrap?: readonly string[] | undefined;
  timeoutMs?: number;
}): Promise<Child> {
  return spawnChild({
    args: [
      opts.script,
      '--cert',
      opts.certs.cert,
      '--key',
      opts.certs.key,
      '--port',
      '0',
      ...(opts.args ?? []),
    ],
    logFile: opts.logFile,
    nodeArgs: opts.nodeArgs,
    cpus: opts.cpus,
    wrap: opts.wrap,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    listening: (line) =>
      line['msg'] === 'listening' && typeof line['port'] === 'number' ? { port: line['port'] } : undefined,
  });
}

/** GET http://127.0.0.1:port/path → status code (0 when the connection fails). */
export function httpStatus(port: number, path: string, timeoutMs = 1_000): Promise<number> {
  return new Promise((done) => {
    const req = get({ host: '127.0.0.1', port, path, timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(0));
  });
}

/** Polls /readyz until 200; returns ms since `since` (performance.now()). */
export async function waitReady(healthPort: number, since: number, timeoutMs = 10_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if ((await httpStatus(healthPort, '/readyz', 500)) === 200) return performance.now() - since;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`/readyz not 200 within ${timeoutMs} ms`);
}

/** Resident set size figures from /proc/<pid>/status, in MiB (Linux only). */
export function memoryOf(pid: number): { rssMiB: number; hwmMiB: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
    return { rssMiB: kb('VmRSS') / 1024, hwmMiB: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Samples VmRSS every `everyMs` until stopped; returns the samples (MiB). */
export function sampleMemory(pid: number, everyMs = 250): { stop: () => number[] } {
  const samples: number[] = [];
  const take = () => {
    const m = memoryOf(pid);
    if (m) samples.push(m.rssMiB);
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

/** CPU time (user + system) a process has used so far, in milliseconds (Linux only). */
export function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11], fields[12]: utime, stime in clock ticks (USER_HZ, 100 on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}
