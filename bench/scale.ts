/**
 * `npm run bench -- scale` (not in CI): the built `serve` against a fake API
 * server holding N realistic IPAddress objects, for each N. Reports, per N:
 * time to /readyz 200, time until a held address is denied (the allocation
 * check in force), peak RSS (VmHWM) and steady RSS, the longest /healthz
 * answer, what a forced relist costs (410 Gone on the IPAddress watch; a
 * build that keeps no watch has none), and review latency while the API
 * server emits 1,000 IPAddress events a second: plain reviews, and reviews
 * whose Cluster address must be looked up (a different address each time,
 * so every one misses the cache: the GET path).
 *
 * Flags: --sizes 1000,10000,… (default 1000,10000,30000,50000,100000),
 * --cli PATH (another build's dist/cli/main.js, for a before/after table),
 * --label NAME (default "current"), --events N (per second, default 1000),
 * --seconds N (length of the events phase, default 5).
 * Writes bench/results/scale-<label>.json and prints a Markdown table.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { keepAliveAgent, post } from '../test/kit/webhook-client.js';
import { ipOf, ScaleApiServer } from './lib/scale-apiserver.js';
import { httpStatus, waitReady } from '../test/kit/http.js';
import { makeCerts, repoRoot, spawnWebhook } from '../test/kit/server-process.js';
import { memoryOf } from '../test/kit/process-stats.js';
import { tempDir } from '../test/kit/key-files.js';
import { sleep } from '../test/kit/eventually.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000,30000,50000,100000' },
    cli: { type: 'string' },
    label: { type: 'string', default: 'current' },
    events: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '5' },
  },
});

function review(uid: string, address: Record<string, string>): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' },
      resource: { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways' },
      name: 'gw',
      namespace: 'bench',
      operation: 'CREATE',
      userInfo: { username: 'bench' },
      object: {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: 'bench' },
        spec: {
          gatewayClassName: 'example',
          listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
          addresses: [address],
        },
      },
    },
  });
}

/** /healthz every 10 ms on a fresh connection (as the kubelet probes); keeps the slowest answer per phase. */
function healthProbe(port: number) {
  let phase = 'start';
  const worst = new Map<string, number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      const code = await httpStatus(port, '/healthz', 10_000);
      const ms = performance.now() - t;
      if (code === 200 || code === 0) worst.set(phase, Math.max(worst.get(phase) ?? 0, ms));
      await sleep(10);
    }
  })();
  return {
    setPhase: (p: string) => (phase = p),
    stop: async () => {
      running = false;
      await loop;
      return Object.fromEntries(worst) as Record<string, number>;
    },
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summary(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s.at(-1) ?? NaN };
}

interface Row {
  label: string;
  objects: number;
  listMB: number;
  readyMs: number;
  /** Spawn → a held address denied. */
  checkInForceMs: number;
  reviewsAdmittedBeforeCheck: number;
  peakRssMiB: number;
  steadyRssMiB: number;
  steadyAfterEventsRssMiB: number;
  healthzWorstMs: Record<string, number>;
  relist: { watches: number; peakRssMiB: number; lists: number } | 'none (no IPAddress list or watch)';
  plainReview: ReturnType<typeof summary>;
  lookupReview: ReturnType<typeof summary>;
  apiRequests: { lists: number; gets: number; watches: number; events: number };
}

async function measure(objects: number, certs: { cert: string; key: string; ca: string }, dir: string) {
  const fake = await ScaleApiServer.start(objects);
  const ca = readFileSync(certs.ca, 'utf8');
  const agent = keepAliveAgent(ca, 4);
  const server = await spawnWebhook({
    certs,
    logFile: join(dir, `serve-${objects}.log`),
    serviceCidrs: '',
    logLevel: 'warn',
    extraArgs: ['--kubeconfig', fake.kubeconfigPath],
    env: { ...process.env, KUBECONFIG: '', ROUTABILITY_WEBHOOK_SERVICE_CIDR: '' },
    ...(values.cli ? { cli: values.cli } : {}),
    timeoutMs: 120_000,
  });
  const probe = healthProbe(server.healthPort!);
  try {
    const readyMs = await waitReady(server.healthPort!, server.spawnedAt, 120_000);
    let uid = 0;
    const ask = async (address: Record<string, string>) => {
      const t = performance.now();
      const res = await post({ agent, port: server.port, body: review(`u${++uid}`, address) });
      const ms = performance.now() - t;
      const allowed = (JSON.parse(res.body) as { response?: { allowed?: boolean } }).response?.allowed;
      return { ms, allowed };
    };
    // Until the allocation check is in force, a held address is admitted: count how many such answers.
    const held = { type: 'IPAddress', value: ipOf(objects - 1), routability: 'Cluster' };
    let admitted = 0;
    const deadline = performance.now() + 120_000;
    for (;;) {
      const a = await ask(held);
      if (a.allowed === false) break;
      admitted++;
      if (performance.now() > deadline) throw new Error('the held address was never denied');
      await sleep(20);
    }
    const checkInForceMs = performance.now() - server.spawnedAt;

    probe.setPhase('steady');
    await sleep(3_000);
    const steadyRssMiB = memoryOf(server.pid)?.rssMiB ?? NaN;

    probe.setPhase('events');
    fake.startEvents(Number(values.events));
    const plain: number[] = [];
    const lookups: number[] = [];
    const eventsUntil = performance.now() + Number(values.seconds) * 1000;
    let k = 0;
    while (performance.now() < eventsUntil) {
      plain.push((await ask({ type: 'Hostname', value: 'gw.example.com', routability: 'External' })).ms);
      // Alternately a held and a free address, never the same twice: each one a cache miss.
      const value = k % 2 === 0 ? ipOf(k % objects) : ipOf(objects + k);
      lookups.push((await ask({ type: 'IPAddress', value, routability: 'Cluster' })).ms);
      k++;
      await sleep(5);
    }
    fake.stopEvents();
    probe.setPhase('after-events');
    await sleep(2_000);
    const steadyAfterEventsRssMiB = memoryOf(server.pid)?.rssMiB ?? NaN;

    probe.setPhase('relist');
    const listsBefore = fake.counters.lists;
    const watches = fake.forceRelist();
    let relist: Row['relist'] = 'none (no IPAddress list or watch)';
    if (watches > 0) {
      const until = performance.now() + 60_000;
      while (fake.ipWatcherCount() === 0 && performance.now() < until) await sleep(20);
      await sleep(3_000);
      relist = {
        watches,
        lists: fake.counters.lists - listsBefore,
        peakRssMiB: memoryOf(server.pid)?.hwmMiB ?? NaN,
      };
    } else await sleep(1_000);

    const memory = memoryOf(server.pid);
    const row: Row = {
      label: values.label,
      objects,
      listMB: 0,
      readyMs,
      checkInForceMs,
      reviewsAdmittedBeforeCheck: admitted,
      peakRssMiB: memory?.hwmMiB ?? NaN,
      steadyRssMiB,
      steadyAfterEventsRssMiB,
      healthzWorstMs: await probe.stop(),
      relist,
      plainReview: summary(plain),
      lookupReview: summary(lookups),
      apiRequests: {
        lists: fake.counters.lists,
        gets: fake.counters.gets,
        watches: fake.counters.watches,
        events: fake.counters.events,
      },
    };
    row.listMB = fake.counters.lists > 0 ? fake.counters.listBytes / fake.counters.lists / 1e6 : 0;
    return row;
  } finally {
    await probe.stop();
    agent.destroy();
    await server.stop();
    await fake.close();
  }
}

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '–');

function table(rows: Row[]): string {
  const out = [
    '| build | IPAddress objects | LIST body | ready | held IP denied after | peak RSS | steady RSS (after events) | /healthz worst | forced relist | plain review p50/p99 during events | GET-path review p50/p99 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|',
  ];
  for (const r of rows) {
    const worst = Math.max(...Object.values(r.healthzWorstMs));
    const relist =
      typeof r.relist === 'string'
        ? r.relist
        : `${r.relist.lists} list(s), peak ${f0(r.relist.peakRssMiB)} MiB`;
    out.push(
      `| ${r.label} | ${r.objects.toLocaleString('en')} | ${r.listMB ? `${r.listMB.toFixed(1)} MB` : 'none'} | ${(r.readyMs / 1000).toFixed(2)} s | ${(r.checkInForceMs / 1000).toFixed(2)} s${r.reviewsAdmittedBeforeCheck ? ` (${r.reviewsAdmittedBeforeCheck} admitted before)` : ''} | ${f0(r.peakRssMiB)} MiB | ${f0(r.steadyRssMiB)} MiB (${f0(r.steadyAfterEventsRssMiB)} MiB) | ${f0(worst)} ms | ${relist} | ${f1(r.plainReview.p50)} / ${f1(r.plainReview.p99)} ms | ${f1(r.lookupReview.p50)} / ${f1(r.lookupReview.p99)} ms |`,
    );
  }
  return out.join('\n');
}

async function main() {
  const tmp = await tempDir('scale-');
  const certs = await makeCerts(join(tmp.path, 'certs'));
  const rows: Row[] = [];
  try {
    for (const n of values.sizes.split(',').map(Number)) {
      const row = await measure(n, certs, tmp.path);
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  } finally {
    await tmp.remove();
  }
  const results = join(repoRoot(), 'bench', 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(join(results, `scale-${values.label}.json`), `${JSON.stringify(rows, null, 2)}\n`);
  console.log(`\n${table(rows)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
