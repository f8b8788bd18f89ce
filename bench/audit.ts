/**
 * `npm run bench:audit`: the audit against the fake Kubernetes API serving N
 * realistic Gateways (1,000 and 10,000 by default; managedFields included,
 * one in ten in violation).
 *
 * 1. `routability-webhook audit` as a child process: wall time, peak RSS
 *    (VmHWM), findings — and `node -e 0`'s peak RSS as the baseline.
 * 2. `serve` with the background audit on, answering reviews on one keep-alive
 *    connection while audit passes run back to back, against the same server
 *    with the audit off, alternating: p50/p99 of admission latency and their
 *    ratio. Ratios, not absolute times, because the machine is shared.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeApiServer, gateway, serviceCidr } from '../test/cluster/fake-apiserver.js';
import { CLI, runCli, startServe, type RunningServer } from '../test/support/server-process.js';
import { keepAliveAgent, post } from './lib/client.js';

const SIZES = (process.env['AUDIT_SIZES'] ?? '1000,10000').split(',').map(Number);
const REVIEWS = Number(process.env['AUDIT_REVIEWS'] ?? '2000');

function peakRss(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ ms: number; mib: number; out: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let hwm = 0;
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const sample = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) hwm = Math.max(hwm, Number(m[1]));
      } catch {
        /* exited */
      }
    }, 5);
    child.once('error', reject);
    child.once('exit', () => {
      clearInterval(sample);
      resolve({ ms: performance.now() - started, mib: hwm / 1024, out });
    });
  });
}

function seed(fake: FakeApiServer, n: number): void {
  const objects = [];
  for (let i = 0; i < n; i++) {
    const value =
      i % 10 === 0 ? `10.200.${(i >> 8) & 255}.${i & 255}` : `10.96.${(i >> 8) & 255}.${i & 255 || 1}`;
    const g = gateway(`ns-${i % 50}`, `gw-${i}`, {
      spec: [{ type: 'IPAddress', value, routability: 'Cluster' }],
    });
    objects.push(g as Parameters<FakeApiServer['setSilently']>[1][number]);
  }
  fake.setSilently('gateways', objects);
}

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function latencies(server: RunningServer, ca: string): Promise<number[]> {
  const agent = keepAliveAgent(ca, 1);
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'bench',
      kind: { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' },
      resource: { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways' },
      operation: 'CREATE',
      namespace: 'default',
      name: 'gw',
      userInfo: { username: 'bench' },
      object: gateway('default', 'gw', {
        spec: [{ type: 'IPAddress', value: '10.96.0.9', routability: 'Cluster' }],
      }),
    },
  });
  const out: number[] = [];
  for (let i = 0; i < REVIEWS; i++) {
    const t = performance.now();
    const r = await post({ agent, port: server.port, body });
    if (r.status !== 200) throw new Error(`review answered ${r.status}`);
    out.push(performance.now() - t);
  }
  agent.destroy();
  return out.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-audit-'));
  const certs = await runCli(['certs', '--out-dir', dir, '--extra-san', 'localhost']);
  if (certs.code !== 0) throw new Error(certs.stderr);
  const ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
  const base = await peakRss(['-e', '0'], {});
  console.log(`baseline: node -e 0 peak RSS ${base.mib.toFixed(1)} MiB`);
  console.log(
    '| Gateways | audit command time | audit peak RSS | findings | admission p50 off/on | admission p99 off/on | p99 ratio | passes during load |',
  );
  console.log('|---:|---:|---:|---|---|---|---:|---:|');
  for (const n of SIZES) {
    const fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/16']));
    seed(fake, n);
    const env = { HOME: dir, KUBECONFIG: fake.kubeconfigPath };
    const cmd = await peakRss([CLI, 'audit', '-o', 'json'], env);
    const summary = (JSON.parse(cmd.out) as { summary: { gateways: number; violations: number } }).summary;
    const args = (interval: string) => [
      '--kubeconfig',
      fake.kubeconfigPath,
      '--tls-cert-file',
      join(dir, 'tls.crt'),
      '--tls-private-key-file',
      join(dir, 'tls.key'),
      '--no-check-allocated-ips',
      '--audit-interval',
      interval,
    ];
    const figures: Record<string, number[]> = { off: [], on: [] };
    let passes = 0;
    for (const mode of ['off', 'on', 'off', 'on'] as const) {
      const server = await startServe(args(mode === 'on' ? '10s' : '0'), {
        ...env,
        POD_NAMESPACE: 'bench',
        POD_NAME: 'bench',
      });
      try {
        for (let i = 0; i < 400; i++) {
          const ready = await fetch(`http://127.0.0.1:${server.healthPort}/readyz`).catch(() => undefined);
          if (ready?.status === 200) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        if (mode === 'on') await new Promise((r) => setTimeout(r, 2_500)); // the first pass is under way
        figures[mode]!.push(...(await latencies(server, ca)));
        if (mode === 'on') {
          const m = /routability_webhook_audit_runs_total\{result="success"\} (\d+)/.exec(
            await (await fetch(`http://127.0.0.1:${server.healthPort}/metrics`)).text(),
          );
          passes += Number(m?.[1] ?? 0);
        }
      } finally {
        await server.stop();
      }
    }
    const off = figures['off']!.sort((a, b) => a - b);
    const on = figures['on']!.sort((a, b) => a - b);
    console.log(
      `| ${n.toLocaleString('en')} | ${(cmd.ms / 1000).toFixed(2)} s | ${cmd.mib.toFixed(1)} MiB | ${summary.gateways} judged, ${summary.violations} violations | ` +
        `${quantile(off, 0.5).toFixed(2)} / ${quantile(on, 0.5).toFixed(2)} ms | ${quantile(off, 0.99).toFixed(2)} / ${quantile(on, 0.99).toFixed(2)} ms | ` +
        `${(quantile(on, 0.99) / quantile(off, 0.99)).toFixed(2)} | ${passes} |`,
    );
    await fake.close();
  }
  await rm(dir, { recursive: true, force: true });
}

await main();
