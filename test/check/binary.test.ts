/**
 * The built CLI end to end (`npm test` builds first; after editing src/, run
 * `npm run build` before this file alone): real process, real stdin, exit code.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FIXTURES, RANGES, REPO } from './support.js';

const CLI = join(REPO, 'dist', 'cli', 'main.js');

function run(
  args: string[],
  stdin?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: FIXTURES, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

describe('node dist/cli/main.js check', () => {
  it('the CLI is built', () => expect(existsSync(CLI), `${CLI} is missing: run npm run build`).toBe(true));

  it('reads a piped stream from stdin and exits 1 on a violation', async () => {
    const stdin =
      'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: gw\n  namespace: apps\nspec:\n  addresses:\n    - value: 192.0.2.1\n      routability: Cluster\n';
    const r = await run(['check', '-f', '-', ...RANGES], stdin);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      '<stdin>:8:14: Gateway apps/gw: spec.addresses[0].value: Invalid value: "192.0.2.1": routability Cluster requires an address inside the service range (10.96.0.0/12, fd00:10:96::/112)\n' +
        'checked 1 Gateway in 1 file: 1 violation, 0 warnings\n',
    );
    expect(r.code).toBe(1);
  });

  it('exits 2 on the fixture folder and prints the same report as in-process', async () => {
    const r = await run(['check', '-f', 'manifests', ...RANGES]);
    expect(r.code).toBe(2);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(
      'checked 11 Gateways in 10 files: 9 violations, 5 warnings; skipped 9 other documents (3 empty); 4 input errors',
    );
  });

  it('exits 0 on a valid file, and 2 on a usage error', async () => {
    expect((await run(['check', '-f', 'manifests/nested/deeper/valid.yml', ...RANGES])).code).toBe(0);
    const usage = await run(['check', '-f', 'manifests']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/service ranges are required/);
  });

  it('does not load the Kubernetes client or the server for a plain check', async () => {
    // A resolve hook reports every module the check loads.
    const hook =
      'export async function initialize({ port }) { globalThis.port = port; }' +
      'export async function resolve(s, c, next) { const r = await next(s, c); globalThis.port.postMessage(r.url); return r; }';
    const probe = `
      import { register } from 'node:module';
      import { MessageChannel } from 'node:worker_threads';
      const { port1, port2 } = new MessageChannel();
      const seen = [];
      port1.on('message', (url) => seen.push(url));
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}), import.meta.url, { data: { port: port2 }, transferList: [port2] });
      const { main } = await import(${JSON.stringify(CLI)});
      const { Writable, Readable } = await import('node:stream');
      const sink = new Writable({ write(_c, _e, cb) { cb(); } });
      const code = await main(['check', '-f', 'manifests/v1beta1.yaml', '--service-cidr', '10.96.0.0/12'], { stdin: Readable.from([]), stdout: sink, stderr: sink, env: {}, cwd: process.cwd() });
      await new Promise((r) => setTimeout(r, 100));
      port1.close();
      console.log(JSON.stringify({ code, seen }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], {
      cwd: FIXTURES,
    });
    const { code, seen } = JSON.parse(stdout) as { code: number; seen: string[] };
    expect(code).toBe(1);
    expect(seen.some((u) => u.endsWith('/dist/check/run.js'))).toBe(true);
    expect(seen.some((u) => u.includes('/node_modules/yaml/'))).toBe(true);
    expect(
      seen.filter((u) => /client-node|fastify|pino|prom-client|\/dist\/(cluster|http|admission)\//.test(u)),
    ).toEqual([]);
  });
});
