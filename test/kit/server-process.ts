/**
 * The one harness that runs the built CLI (`dist/cli/main.js`) in a child process, for tests and
 * benchmarks alike. Every server starts through `launch` and is waited for by `waitListening`:
 * its output goes to memory (pipes), or to a file as a container runtime would take it (a
 * benchmark's load generator then never spends event-loop time on the server's logs), and is
 * polled until the server says it listens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keyDir, removeDir, writeCerts, type CertFiles, type CertPaths } from './key-files.js';
import { httpStatus } from './http.js';
import { sleep } from './eventually.js';

/** The repository root, whether running from test/kit/ (vitest) or the benchmarks' compiled copy. */
export function repoRoot(): string {
  let dir = fileURLToPath(new URL('.', import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'src'))) return dir;
    dir = resolve(dir, '..');
  }
  throw new Error('cannot find the repository root from ' + import.meta.url);
}

export const CLI = join(repoRoot(), 'dist', 'cli', 'main.js');
export const SERVICE_CIDRS = '10.96.0.0/12,fd00:10:96::/112';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** performance.now() when it exited. */
  at: number;
}

export interface Ports {
  port: number;
  healthPort?: number;
}

/** A started child process and what it has written so far. */
export interface Launched {
  readonly process: ChildProcess;
  readonly spawnedAt: number;
  /** Resolves with the exit code/signal; never rejects. */
  readonly exited: Promise<Exit>;
  exit(): Exit | undefined;
  /** stdout (with stderr, when both go to a log file). */
  stdout(): string;
  /** stderr; empty when it goes to the log file. */
  stderr(): string;
  /** The JSON lines of stdout so far, parsed once each. */
  entries(): Record<string, unknown>[];
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL now. */
  kill(): Promise<void>;
}

export interface LaunchOptions {
  /** Arguments for node: a script and its arguments. */
  readonly args: readonly string[];
  /** Output to this file (stdout and stderr together); absent: to memory. */
  readonly logFile?: string | undefined;
  readonly nodeArgs?: readonly string[] | undefined;
  readonly env?: NodeJS.ProcessEnv | undefined;
  /** CPU list (taskset -c) the child and all its threads run on; absent: any. */
  readonly cpus?: string | undefined;
  /** A command node runs under, in the same process (e.g. valgrind and its options). */
  readonly wrap?: readonly string[] | undefined;
}

/** Incremental JSON-lines parsing of a growing text. */
function lineParser(text: () => string): () => Record<string, unknown>[] {
  const parsed: Record<string, unknown>[] = [];
  let consumed = 0;
  return () => {
    const all = text();
    const end = all.lastIndexOf('\n') + 1;
    for (const line of all.slice(consumed, Math.max(end, consumed)).split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        parsed.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        /* not a JSON log line */
      }
    }
    consumed = Math.max(end, consumed);
    return parsed;
  };
}

/** Starts `node ...args`; its output goes to memory or to `logFile`. */
export function launch(opts: LaunchOptions): Launched {
  const fd = opts.logFile === undefined ? undefined : openSync(opts.logFile, 'w');
  const spawnedAt = performance.now();
  const argv = [...(opts.wrap ?? []), process.execPath, ...(opts.nodeArgs ?? []), ...opts.args];
  // taskset execs node in the same process: the pid stays the server's.
  const [command, ...args] = opts.cpus ? ['taskset', '-c', opts.cpus, ...argv] : argv;
  const child = spawn(command!, args, {
    stdio: fd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', fd, fd],
    env: opts.env ?? process.env,
  });
  if (fd !== undefined) closeSync(fd);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const logFile = opts.logFile;
  const stdout =
    logFile === undefined ? () => out : () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  let exitInfo: Exit | undefined;
  const exited = new Promise<Exit>((done) => {
    child.once('exit', (code, signal) => done((exitInfo = { code, signal, at: performance.now() })));
    child.once('error', () => done((exitInfo = { code: null, signal: null, at: performance.now() })));
  });
  const stop = async (graceMs = 5_000) => {
    if (exitInfo) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  const kill = async () => {
    if (!exitInfo) child.kill('SIGKILL');
    await exited;
  };
  const entries = lineParser(stdout);
  return {
    process: child,
    spawnedAt,
    exited,
    exit: () => exitInfo,
    stdout,
    stderr: () => err,
    entries,
    stop,
    kill,
  };
}

export interface WaitOptions {
  /** Ports once the output says the child listens. */
  readonly listening: (child: Launched) => Ports | undefined;
  /** Another way to learn that the child listens, tried on every poll. */
  readonly poll?: (() => Promise<Ports | undefined>) | undefined;
  /** Well under a second on an idle machine; the default is for a loaded, shared one. */
  readonly timeoutMs?: number | undefined;
}

/** Polls until the child listens; stops it and rejects when it exits or the time is up. */
export async function waitListening(child: Launched, opts: WaitOptions): Promise<Ports> {
  const timeoutMs = opts.timeoutMs ?? 45_000;
  const deadline = child.spawnedAt + timeoutMs;
  for (;;) {
    const ports = (opts.poll ? await opts.poll() : undefined) ?? opts.listening(child);
    if (ports) return ports;
    const exit = child.exit();
    if (exit || performance.now() > deadline) {
      await child.stop(500);
      const output = `${child.stdout().split('\n').slice(-20).join('\n')}${child.stderr()}`;
      throw new Error(
        exit
          ? `server exited with ${exit.code ?? exit.signal} before listening:\n${output}`
          : `server did not start within ${timeoutMs} ms:\n${output}`,
      );
    }
    await sleep(5);
  }
}

/** The ports of a JSON `listening` log line. */
export function jsonListening(child: Launched): Ports | undefined {
  const line = child.entries().find((l) => l['msg'] === 'listening' && typeof l['port'] === 'number');
  if (!line) return undefined;
  const healthPort = line['healthPort'];
  return typeof healthPort === 'number'
    ? { port: line['port'] as number, healthPort }
    : { port: line['port'] as number };
}

/** A server child that listens. */
export interface Child extends Launched {
  readonly pid: number;
  readonly port: number;
  readonly healthPort: number | undefined;
  /** ms from spawn to listening. */
  readonly listeningAfterMs: number;
  readonly logFile: string | undefined;
  /** The raw lines of its output. */
  logs(): string[];
}

/** Launches and waits until it listens: the one way every server here starts. */
export async function spawnChild(opts: LaunchOptions & WaitOptions): Promise<Child> {
  const launched = launch(opts);
  const ports = await waitListening(launched, opts);
  return {
    ...launched,
    pid: launched.process.pid!,
    port: ports.port,
    healthPort: ports.healthPort,
    listeningAfterMs: performance.now() - launched.spawnedAt,
    logFile: opts.logFile,
    logs: () => launched.stdout().split('\n').filter(Boolean),
  };
}

export interface WebhookOptions {
  readonly certs: { readonly cert: string; readonly key: string };
  /** Output to this file; absent: to memory. */
  readonly logFile?: string | undefined;
  /** Default: `--service-cidr` with both families. */
  readonly extraArgs?: readonly string[];
  readonly serviceCidrs?: string | undefined;
  readonly logLevel?: string;
  readonly nodeArgs?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** Another build's dist/cli/main.js (to compare builds); default this repository's. */
  readonly cli?: string;
  /** How long the child may take to listen. */
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
  const poll = async () => {
    if (!healthy) healthy = (await httpStatus(ports.healthPort, '/healthz', 200)) === 200;
    return healthy ? ports : undefined;
  };
  return spawnChild({
    ...opts,
    args: [
      opts.cli ?? process.env['BENCH_WEBHOOK_CLI'] ?? CLI,
      'serve',
      ...(cidrs ? ['--service-cidr', cidrs] : []),
      ...['--tls-cert-file', opts.certs.cert, '--tls-private-key-file', opts.certs.key],
      ...['--port', String(ports.port), '--health-port', String(ports.healthPort)],
      ...['--log-level', opts.logLevel ?? 'info'],
      ...(opts.extraArgs ?? []),
    ],
    listening: jsonListening,
    poll: quiet ? poll : undefined,
  });
}

/** The baseline server: bench/baseline-server.ts, compiled. */
export function spawnBaseline(opts: {
  certs: { readonly cert: string; readonly key: string };
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
    ...opts,
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
    listening: (child) => {
      const ports = jsonListening(child);
      return ports && { port: ports.port };
    },
  });
}

/** A `serve` on port 0 whose JSON logs the test reads. */
export interface RunningServer {
  proc: ChildProcess;
  port: number;
  healthPort: number;
  /** Its JSON log lines so far. */
  readonly logs: Record<string, unknown>[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL, and wait for the exit. */
  stop(): Promise<void>;
}

/** Starts `serve` with port 0 and resolves once it logs the ports it bound. */
export async function startServe(args: string[], env: Record<string, string> = {}): Promise<RunningServer> {
  const child = await spawnChild({
    args: [CLI, 'serve', '--port', '0', '--health-port', '0', ...args],
    env: { ...process.env, ...env },
    listening: jsonListening,
  });
  return {
    proc: child.process,
    port: child.port,
    healthPort: child.healthPort!,
    get logs() {
      return child.entries();
    },
    stderr: child.stderr,
    exited: child.exited.then(({ code, signal }) => ({ code, signal })),
    stop: child.kill,
  };
}

/** A `serve --dev`, whose logs are human-readable: the ports come from its "listening" entry. */
export interface DevServer {
  readonly started: Promise<{ port: number; healthPort: number }>;
  /** Everything written so far, stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

const DEV_LISTENING = /INFO: listening\n(?:\s+\w+: .*\n)*?\s+port: (\d+)\n\s+healthPort: (\d+)/;

/** Starts `serve --dev` with port 0, then `args`, in `env` on top of this process's environment. */
export function startDevServe(args: string[], env: NodeJS.ProcessEnv): DevServer {
  const child = launch({
    args: [CLI, 'serve', '--dev', '--port', '0', '--health-port', '0', ...args],
    env: { ...process.env, ...env },
  });
  const started = waitListening(child, {
    timeoutMs: 60_000,
    listening: (c) => {
      const m = DEV_LISTENING.exec(c.stdout());
      return m ? { port: Number(m[1]), healthPort: Number(m[2]) } : undefined;
    },
  }).then((ports) => ({ port: ports.port, healthPort: ports.healthPort! }));
  return { started, output: () => child.stdout() + child.stderr(), stop: child.kill };
}

/** A `serve` on freshly generated certificates, and the one call that ends both. */
export interface ServingWithCerts {
  readonly certs: CertFiles;
  readonly server: RunningServer;
  /** Stops the server and deletes the folder holding its private key. */
  stop(): Promise<void>;
}

/** Writes new certificates and starts `serve` on them: the TLS flags, then `args`. */
export async function startServeWithCerts(
  args: string[],
  env: Record<string, string> = {},
): Promise<ServingWithCerts> {
  const certs = await writeCerts();
  try {
    const tls = ['--tls-cert-file', certs.certFile, '--tls-private-key-file', certs.keyFile];
    const server = await startServe([...tls, ...args], env);
    return {
      certs,
      server,
      stop: async () => {
        await server.stop();
        certs.remove();
      },
    };
  } catch (err) {
    certs.remove();
    throw err;
  }
}

/** A `serve` reading a (fake) Kubernetes API through a kubeconfig, on certificates from `certs`. */
export interface ServingAgainstApi {
  readonly server: RunningServer;
  /** The CA that signed the serving certificate, for HTTPS clients. */
  readonly ca: string;
  /** Stops the server and deletes the folder holding its private key. */
  stop(): Promise<void>;
}

/**
 * Generates certificates with the CLI's own `certs` command and starts `serve`
 * with `--kubeconfig kubeconfigPath`, the TLS flags, then `args`. No service
 * range comes from the environment, so the ranges are the API's.
 */
export async function startServeAgainstApi(
  kubeconfigPath: string,
  options: { args?: string[]; env?: Record<string, string>; prefix?: string } = {},
): Promise<ServingAgainstApi> {
  const dir = keyDir(options.prefix ?? 'rw-serve-api-');
  try {
    const certs = await runCli(['certs', '--out-dir', dir, '--extra-san', 'localhost']);
    if (certs.code !== 0) throw new Error(`certs exited with ${certs.code}: ${certs.stderr}`);
    const tls = ['--tls-cert-file', join(dir, 'tls.crt'), '--tls-private-key-file', join(dir, 'tls.key')];
    const server = await startServe(['--kubeconfig', kubeconfigPath, ...tls, ...(options.args ?? [])], {
      KUBECONFIG: '',
      ROUTABILITY_WEBHOOK_SERVICE_CIDR: '',
      ...options.env,
    });
    return {
      server,
      ca: readFileSync(join(dir, 'ca.crt'), 'utf8'),
      stop: async () => {
        await server.stop();
        removeDir(dir);
      },
    };
  } catch (err) {
    removeDir(dir);
    throw err;
  }
}

/** Runs the CLI to completion (for start-up failures and one-shot commands). */
export function runCli(args: string[], options: { env?: Record<string, string>; input?: string } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const proc = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.stdin.end(options.input ?? '');
    proc.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `routability-webhook certs --out-dir DIR --force`. */
export async function makeCerts(dir: string, extraArgs: readonly string[] = []): Promise<CertPaths> {
  const result = await runCli(['certs', '--out-dir', dir, '--force', ...extraArgs]);
  if (result.code !== 0) throw new Error(`certs exited with ${result.code}: ${result.stderr}`);
  return { dir, ca: join(dir, 'ca.crt'), cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
}
