/**
 * `npm run bench -- audit`: the audit against the fake Kubernetes API serving N
 * realistic Gateways (1,000 and 10,000 by default; managedFields included,
 * one in ten in violation). The fake runs in its own process
 * (bench/audit-apiserver.ts), so its work never lands on the load
 * generator's event loop.
 *
 * 1. `routability-webhook audit -o json` as a child process: wall time and
 *    peak RSS (VmHWM, sampled every 5 ms) — with `node -e 0`'s as the baseline.
 * 2. `serve` answering reviews on one keep-alive connection, with the
 *    background audit off and on, alternating (off, on, off, on). With it on,
 *    reviews go on until passes have run, and only the reviews sent while a
 *    pass was running (its window read from the `audit pass done` log line)
 *    count as "during the audit". p50/p99 of both and the p99 ratio — ratios,
 *    not absolute times, because the machine is shared — plus serve's peak
 *    RSS with the audit off and on.
 *
 * AUDIT_SIZES (default 1000,10000; 100000 runs too), AUDIT_REVIEWS (default
 * 2000: reviews per "off" round, and the least per "on" round), AUDIT_ROUNDS
 * (default 2: off/on pairs; the p99 ratio of each pair and their median are
 * printed, the machine being shared), AUDIT_HEAP=pod (run `audit` and `serve`
 * with the V8 heap Node gives itself in the chart's 256 MiB pod, as
 * test/kit/attacks.ts does; default: this machine's own).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { gateway } from '../test/kit/fake-apiserver.js';
import { keepAliveAgent, post } from '../test/kit/webhook-client.js';
import { CLI, makeCerts, spawnWebhook, type Child } from '../test/kit/server-process.js';
import { memoryOf } from '../test/kit/process-stats.js';
import { tempDir, type CertPaths } from '../test/kit/key-files.js';
import { POD_NODE_ARGS } from '../test/kit/attacks.js';
import { sleep } from '../test/kit/eventually.js';

const SIZES = (process.env['AUDIT_SIZES'] ?? '1000,10000').split(',').map(Number);
const REVIEWS = Number(process.env['AUDIT_REVIEWS'] ?? '2000');
const ROUNDS = Number(process.env['AUDIT_ROUNDS'] ?? '2');
const NODE_ARGS: readonly string[] = process.env['AUDIT_HEAP'] === 'pod' ? POD_NODE_ARGS : [];
/** An "on" round gives up waiting for passes after this long. */
const ON_ROUND_MAX_MS = 180_000;

interface FakeProcess {
  readonly kubeconfig: string;
  stop(): Promise<void>;
}

/** Starts bench/audit-apiserver.js (compiled next to this file) serving n Gateways. */
async function startFake(n: number): Promise<FakeProcess> {
  const script = join(import.meta.dirname, 'audit-apiserver.js');
  const child: ChildProcess = spawn(process.execPath, [script, String(n)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const first = await new Promise<string>((done, fail) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', done);
    child.once('exit', (code) => fail(new Error(`audit-apiserver exited ${code}`)));
  });
  const { kubeconfig } = JSON.parse(first) as { kubeconfig: string };
  return {
    kubeconfig,
    stop: () =>
      new Promise<void>((done) => {
        child.once('exit', () => done());
        child.stdin!.end();
      }),
  };
}

/** Wall time and peak RSS of a child node process. */
function peakRss(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ ms: number; mib: number; out: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...NODE_ARGS, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let hwm = 0;
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const sample = setInterval(() => {
      const m = memoryOf(child.pid!);
      if (m && Number.isFinite(m.hwmMiB)) hwm = Math.max(hwm, m.hwmMiB);
    }, 5);
    child.once('error', reject);
    child.once('exit', () => {
      clearInterval(sample);
      resolve({ ms: performance.now() - started, mib: hwm, out });
    });
  });
}

const quantile = (sorted: readonly number[], q: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

const REVIEW = JSON.stringify({
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

interface Timed {
  readonly sentAt: number; // Date.now(), comparable with the server's log times
  readonly ms: number;
}

/** Reviews one after another on one keep-alive connection until `enough()` says stop. */
async function reviews(server: Child, ca: string, enough: (count: number) => boolean): Promise<Timed[]> {
  const agent = keepAliveAgent(ca, 1);
  const out: Timed[] = [];
  while (!enough(out.length)) {
    const sentAt = Date.now();
    const t = performance.now();
    const r = await post({ agent, port: server.port, body: REVIEW });
    if (r.status !== 200) throw new Error(`review answered ${r.status}`);
    out.push({ sentAt, ms: performance.now() - t });
  }
  agent.destroy();
  return out;
}

/** [start, end] (epoch ms) of every audit pass the server logged. */
function passWindows(server: Child): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (const line of server.logs()) {
    if (!line.includes('"audit pass done"')) continue;
    const entry = JSON.parse(line) as { time: number; durationMs: number };
    out.push({ start: entry.time - entry.durationMs, end: entry.time });
  }
  return out;
}

interface Round {
  latencies: number[];
  passes: number;
  passMs: number[];
  serveHwmMiB: number;
}

async function round(mode: 'off' | 'on', fake: FakeProcess, certs: CertPaths, dir: string): Promise<Round> {
  const server = await spawnWebhook({
    certs,
    nodeArgs: NODE_ARGS,
    logFile: join(dir, `serve-${mode}.log`),
    serviceCidrs: '',
    extraArgs: [
      '--kubeconfig',
      fake.kubeconfig,
      '--no-check-allocated-ips',
      '--audit-interval',
      mode === 'on' ? '10s' : '0',
    ],
    env: { ...process.env, KUBECONFIG: '', HOME: dir, POD_NAMESPACE: 'bench', POD_NAME: `bench-${mode}` },
  });
  try {
    for (let i = 0; i < 600; i++) {
      const ready = await fetch(`http://127.0.0.1:${server.healthPort}/readyz`).catch(() => undefined);
      if (ready?.status === 200) break;
      await sleep(50);
    }
    const ca = readFileSync(certs.ca, 'utf8');
    if (mode === 'off') {
      const timed = await reviews(server, ca, (count) => count >= REVIEWS);
      return {
        latencies: timed.map((t) => t.ms),
        passes: 0,
        passMs: [],
        serveHwmMiB: memoryOf(server.pid)?.hwmMiB ?? NaN,
      };
    }
    // On: go on until two passes have finished after the first review, and at least REVIEWS were sent.
    const begun = Date.now();
    const deadline = performance.now() + ON_ROUND_MAX_MS;
    let checked = 0;
    let done = false;
    const timed = await reviews(server, ca, (count) => {
      if (count - checked >= 100) {
        checked = count;
        done = passWindows(server).filter((w) => w.start >= begun - 2_000).length >= 2;
      }
      return (done && count >= REVIEWS) || performance.now() > deadline;
    });
    const windows = passWindows(server);
    const during = timed.filter((t) => windows.some((w) => t.sentAt >= w.start && t.sentAt + t.ms <= w.end));
    return {
      latencies: during.map((t) => t.ms),
      passes: windows.length,
      passMs: windows.map((w) => w.end - w.start),
      serveHwmMiB: memoryOf(server.pid)?.hwmMiB ?? NaN,
    };
  } finally {
    await server.stop();
  }
}

const f2 = (x: number) => x.toFixed(2);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const dir = await tempDir('bench-audit-');
  const certs = await makeCerts(dir.path, ['--extra-san', 'localhost']);
  const base = await peakRss(['-e', '0'], process.env);
  console.log(`baseline: node -e 0 peak RSS ${base.mib.toFixed(1)} MiB; load average at start ${load()}`);
  const rows: string[] = [];
  for (const n of SIZES) {
    const fake = await startFake(n);
    try {
      const env = { ...process.env, HOME: dir.path, KUBECONFIG: fake.kubeconfig };
      const cmd = await peakRss([CLI, 'audit', '-o', 'json'], env);
      const summary = (JSON.parse(cmd.out) as { summary: { gateways: number; violations: number } }).summary;
      const off: number[] = [];
      const on: number[] = [];
      const passMs: number[] = [];
      const hwm = { off: 0, on: 0 };
      const ratios: number[] = [];
      let passes = 0;
      for (let pair = 0; pair < ROUNDS; pair++) {
        const p99 = { off: NaN, on: NaN };
        for (const mode of ['off', 'on'] as const) {
          const r = await round(mode, fake, certs, dir.path);
          (mode === 'on' ? on : off).push(...r.latencies);
          hwm[mode] = Math.max(hwm[mode], r.serveHwmMiB);
          passes += r.passes;
          passMs.push(...r.passMs);
          p99[mode] = quantile(
            [...r.latencies].sort((a, b) => a - b),
            0.99,
          );
          console.log(
            `n=${n} round ${pair + 1} ${mode}: p99 ${f2(p99[mode])} ms, ${r.latencies.length} reviews, ` +
              `serve peak RSS ${r.serveHwmMiB.toFixed(1)} MiB, passes ${r.passMs.map((ms) => (ms / 1000).toFixed(1)).join(' ')} s; load ${load()}`,
          );
        }
        ratios.push(p99.on / p99.off);
      }
      const sortedRatios = [...ratios].sort((a, b) => a - b);
      console.log(
        `n=${n} p99 during/off per round: ${ratios.map(f2).join(', ')}; median ${f2(quantile(sortedRatios, 0.5))}`,
      );
      off.sort((a, b) => a - b);
      on.sort((a, b) => a - b);
      const row =
        `| ${n.toLocaleString('en')} | ${(cmd.ms / 1000).toFixed(2)} s | ${cmd.mib.toFixed(1)} MiB | ` +
        `${summary.gateways.toLocaleString('en')} judged, ${summary.violations.toLocaleString('en')} violations | ` +
        `${passes} passes, ${(Math.min(...passMs) / 1000).toFixed(2)}–${(Math.max(...passMs) / 1000).toFixed(2)} s | ` +
        `${f2(quantile(off, 0.5))} / ${f2(quantile(on, 0.5))} ms | ${f2(quantile(off, 0.99))} / ${f2(quantile(on, 0.99))} ms | ` +
        `**${f2(quantile(on, 0.99) / quantile(off, 0.99))}** | ${off.length.toLocaleString('en')} / ${on.length.toLocaleString('en')} | ` +
        `${hwm.off.toFixed(0)} / ${hwm.on.toFixed(0)} MiB | ${load()} |`;
      rows.push(row);
      console.log(`n=${n} done: ${row}`);
    } finally {
      await fake.stop();
    }
  }
  console.log('');
  console.log(
    '| Gateways | `audit` time | `audit` peak RSS | findings | background passes (duration under load) | admission p50 off / during audit | admission p99 off / during audit | p99 during/off | reviews off / during | serve peak RSS off / on | load average after (1, 5, 15 min) |',
  );
  console.log('|---:|---:|---:|---|---|---|---|---:|---:|---|---|');
  for (const row of rows) console.log(row);
  await dir.remove();
}

await main();
