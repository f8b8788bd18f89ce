/** Runs the built `routability-webhook serve` as a child process and talks to it over real HTTPS. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCertificates, type GeneratedCertificates } from '../../src/certs/generate.js';

export const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');

export interface CertFiles {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  generated: GeneratedCertificates;
  /** Deletes the folder and the private keys in it (call it in afterAll/afterEach). */
  remove(): void;
}

/** A temporary folder for key material; delete it with removeDir in afterAll/afterEach. */
export function keyDir(prefix = 'rw-certs-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export async function writeCerts(dir = keyDir()): Promise<CertFiles> {
  const generated = await generateCertificates({ service: 'gateway-routability-webhook', namespace: 'test' });
  const files = {
    caFile: join(dir, 'ca.crt'),
    certFile: join(dir, 'tls.crt'),
    keyFile: join(dir, 'tls.key'),
  };
  writeFileSync(files.caFile, generated.caCert);
  writeFileSync(files.certFile, generated.cert);
  writeFileSync(files.keyFile, generated.key);
  return { dir, ...files, generated, remove: () => removeDir(dir) };
}

export interface RunningServer {
  proc: ChildProcess;
  port: number;
  healthPort: number;
  logs: Record<string, unknown>[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 45_000;

/** Starts `serve` with port 0 and resolves once it logs the ports it bound. */
export function startServe(args: string[], env: Record<string, string> = {}): Promise<RunningServer> {
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--health-port', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  let buffered = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    // Start-up takes well under a second on an idle machine; the bound is for a
    // loaded shared one (several suites at once), not a figure.
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`server did not start within ${START_TIMEOUT_MS} ms: ${stderr}`));
    }, START_TIMEOUT_MS);
    proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          logs.push(entry);
          if (entry['msg'] === 'listening') {
            clearTimeout(timer);
            resolve({
              proc,
              port: entry['port'] as number,
              healthPort: entry['healthPort'] as number,
              logs,
              stderr: () => stderr,
              exited,
              stop: async () => {
                if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
                await exited;
              },
            });
          }
        } catch {
          /* not a JSON log line */
        }
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening: ${stderr}`));
    });
  });
}

/** A `serve --dev`, whose logs are human-readable: the ports come from its "listening" entry. */
export interface DevServer {
  readonly started: Promise<{ port: number; healthPort: number }>;
  /** Everything written so far, stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `serve --dev` with port 0, then `args`, in `env` on top of this process's environment. */
export function startDevServe(args: string[], env: NodeJS.ProcessEnv): DevServer {
  const proc: ChildProcess = spawn(
    process.execPath,
    [CLI, 'serve', '--dev', '--port', '0', '--health-port', '0', ...args],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const started = new Promise<{ port: number; healthPort: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve --dev did not start:\n${out}`)), 60_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /INFO: listening\n(?:\s+\w+: .*\n)*?\s+port: (\d+)\n\s+healthPort: (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), healthPort: Number(m[2]) });
      }
    });
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  });
  return {
    started,
    output: () => out,
    stop: async () => {
      proc.kill('SIGKILL');
      await exited;
    },
  };
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
    const server = await startServe(
      ['--tls-cert-file', certs.certFile, '--tls-private-key-file', certs.keyFile, ...args],
      env,
    );
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
    const server = await startServe(
      [
        '--kubeconfig',
        kubeconfigPath,
        '--tls-cert-file',
        join(dir, 'tls.crt'),
        '--tls-private-key-file',
        join(dir, 'tls.key'),
        ...(options.args ?? []),
      ],
      { KUBECONFIG: '', ROUTABILITY_WEBHOOK_SERVICE_CIDR: '', ...options.env },
    );
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

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Reads a whole response into an HttpResult. */
export function collect(res: IncomingMessage, resolve: (result: HttpResult) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () =>
    resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
  );
}

export function httpsPost(
  port: number,
  path: string,
  body: string | Buffer,
  options: RequestOptions & { contentType?: string } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        rejectUnauthorized: options.ca !== undefined,
        servername: 'localhost',
        ...options,
        headers: {
          'content-type': options.contentType ?? 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => collect(res, resolve),
    );
    req.on('error', reject);
    req.end(body);
  });
}

export function httpGet(port: number, path: string): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path }, (res) => collect(res, resolve))
      .on('error', reject)
      .end();
  });
}

/** Polls until `probe` returns true or the deadline passes. */
export async function eventually(
  probe: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
  stepMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
