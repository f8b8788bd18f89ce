/**
 * `npm run bench -- memory`: the webhook's resident memory against Fastify's, in
 * the same run. Fastify 5 with its defaults, HTTPS and the review routes
 * (bench/fastify-server.ts --defaults) is the floor; the webhook is measured
 * with --service-cidr and no cluster, and against the fake Kubernetes API
 * (ServiceCIDR watch, IPAddress lookups, the Gateway CRD read, the audit).
 *
 * - idle: VmRSS once the process has listened (and, with a cluster, is ready)
 *   and sat --settle seconds; the median of --rounds starts.
 * - peak: VmHWM after the bench's load (bench/lib/load.ts: every payload of
 *   `npm run bench` in turn, --seconds each, 32 connections), against the
 *   floor's VmHWM under the same load.
 * - readiness with a cluster: spawn to /readyz 200, median of --rounds starts.
 *
 * Prints the ratios and the targets of the memory issue (idle ≤ 1.3×, peak
 * ≤ 1.5×, readiness ≤ 1 s) with the machine's load; writes
 * bench/results/memory.json. Not a timed test: the figures depend on the
 * machine. Flags: --rounds N (5), --settle S (3), --seconds S (5),
 * --connections N (32), --node-args "..." (extra node flags for the webhook,
 * e.g. the image's NODE_OPTIONS, to compare).
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FakeApiServer, serviceCidr } from '../test/kit/fake-apiserver.js';
import { loadFor } from './lib/load.js';
import { makeCerts, spawnBaseline, spawnWebhook, type Child } from '../test/kit/server-process.js';
import { memoryOf } from '../test/kit/process-stats.js';
import { tempDir, type CertPaths as CertFiles } from '../test/kit/key-files.js';
import { waitReady } from '../test/kit/http.js';
import { writeBenchResult } from './lib/results.js';
import { benchPayloads } from '../test/kit/payloads.js';
import { sleep } from '../test/kit/eventually.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    settle: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    'node-args': { type: 'string', default: '' },
  },
});
const ROUNDS = Number(flags.rounds);
const SETTLE_MS = Number(flags.settle) * 1000;
const LOAD = { seconds: Number(flags.seconds), connections: Number(flags.connections) };
const NODE_ARGS = (flags['node-args'] ?? '').split(' ').filter(Boolean);
for (const [name, value] of [
  ['rounds', ROUNDS],
  ['settle', SETTLE_MS],
  ['seconds', LOAD.seconds],
  ['connections', LOAD.connections],
] as const)
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`npm run bench -- memory: --${name} must be a positive number`);

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const mib = (n: number): string => `${n.toFixed(1)} MiB`;
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

function rss(child: Child): { rssMiB: number; hwmMiB: number } {
  const m = memoryOf(child.pid);
  if (!m) throw new Error(`npm run bench -- memory: cannot read /proc/${child.pid}/status (Linux only)`);
  return m;
}

/** Idle VmRSS after settling, then VmHWM after the bench's load. */
async function idleThenPeak(child: Child, certs: CertFiles): Promise<{ idle: number; peak: number }> {
  await sleep(SETTLE_MS);
  const idle = rss(child).rssMiB;
  for (const p of benchPayloads()) await loadFor(child, p, readFileSync(certs.ca, 'utf8'), LOAD);
  return { idle, peak: rss(child).hwmMiB };
}

interface Mode {
  readonly name: string;
  readonly start: (logFile: string) => Promise<Child>;
  /** Until ready (cluster mode: /readyz 200); returns ms since spawn. */
  readonly ready?: (child: Child) => Promise<number>;
}

interface ModeFigures {
  readonly idleMiB: number[];
  readonly peakMiB: number;
  readonly readyMs: number[];
}

/** --rounds starts of one mode: idle RSS (and readiness) each time, the load on the last. */
async function measure(mode: Mode, dir: string, certs: CertFiles): Promise<ModeFigures> {
  const idleMiB: number[] = [];
  const readyMs: number[] = [];
  let peakMiB = NaN;
  for (let round = 1; round <= ROUNDS; round++) {
    const child = await mode.start(join(dir, `${mode.name}-${round}.log`));
    try {
      if (mode.ready) readyMs.push(await mode.ready(child));
      if (round < ROUNDS) {
        await sleep(SETTLE_MS);
        idleMiB.push(rss(child).rssMiB);
      } else {
        const { idle, peak } = await idleThenPeak(child, certs);
        idleMiB.push(idle);
        peakMiB = peak;
      }
    } finally {
      await child.stop();
    }
    process.stdout.write(
      `  ${mode.name} start ${round}: idle ${mib(idleMiB.at(-1)!)}` +
        (readyMs.length ? `, ready ${readyMs.at(-1)!.toFixed(0)} ms` : '') +
        (round === ROUNDS ? `, peak under load ${mib(peakMiB)}` : '') +
        ` (load ${load()})\n`,
    );
  }
  return { idleMiB, peakMiB, readyMs };
}

function verdict(value: number, target: number): string {
  return `${value.toFixed(2)} (target ≤ ${target}: ${value <= target ? 'met' : 'NOT met'})`;
}

async function main(): Promise<void> {
  const dir = await tempDir('bench-memory-');
  const fake = await FakeApiServer.start();
  try {
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    const certs = await makeCerts(join(dir.path, 'certs'));
    const script = fileURLToPath(new URL('./fastify-server.js', import.meta.url));
    const env = { ...process.env, KUBECONFIG: '' };
    const modes: Mode[] = [
      {
        name: 'fastify',
        start: (logFile) => spawnBaseline({ certs, logFile, script, args: ['--defaults'] }),
      },
      {
        name: 'no-cluster',
        start: (logFile) => spawnWebhook({ certs, logFile, nodeArgs: NODE_ARGS, env }),
      },
      {
        name: 'cluster',
        start: (logFile) =>
          spawnWebhook({
            certs,
            logFile,
            nodeArgs: NODE_ARGS,
            env,
            serviceCidrs: '',
            extraArgs: ['--kubeconfig', fake.kubeconfigPath],
          }),
        ready: (child) => waitReady(child.healthPort!, child.spawnedAt, 30_000),
      },
    ];
    process.stdout.write(
      `npm run bench -- memory: ${ROUNDS} starts each, idle after ${SETTLE_MS / 1000} s, load ${LOAD.seconds} s per payload ` +
        `at ${LOAD.connections} connections; node ${process.version}${NODE_ARGS.length ? `, webhook node args ${NODE_ARGS.join(' ')}` : ''}\n`,
    );
    const figures: Record<string, ModeFigures> = {};
    for (const mode of modes) figures[mode.name] = await measure(mode, dir.path, certs);
    const floor = figures['fastify']!;
    const summary = {
      fastifyIdleMiB: median(floor.idleMiB),
      fastifyPeakMiB: floor.peakMiB,
      noClusterIdleRatio: median(figures['no-cluster']!.idleMiB) / median(floor.idleMiB),
      clusterIdleRatio: median(figures['cluster']!.idleMiB) / median(floor.idleMiB),
      noClusterPeakRatio: figures['no-cluster']!.peakMiB / floor.peakMiB,
      clusterPeakRatio: figures['cluster']!.peakMiB / floor.peakMiB,
      clusterReadyMedianMs: median(figures['cluster']!.readyMs),
    };
    process.stdout.write(
      [
        '',
        `Fastify (defaults, HTTPS): idle ${mib(summary.fastifyIdleMiB)}, peak ${mib(summary.fastifyPeakMiB)}`,
        `webhook, no cluster: idle ${mib(median(figures['no-cluster']!.idleMiB))}, peak ${mib(figures['no-cluster']!.peakMiB)}`,
        `webhook, cluster:    idle ${mib(median(figures['cluster']!.idleMiB))}, peak ${mib(figures['cluster']!.peakMiB)}`,
        `idle ratio, no cluster: ${verdict(summary.noClusterIdleRatio, 1.3)}`,
        `idle ratio, cluster:    ${verdict(summary.clusterIdleRatio, 1.3)}`,
        `peak ratio, no cluster: ${verdict(summary.noClusterPeakRatio, 1.5)}`,
        `peak ratio, cluster:    ${verdict(summary.clusterPeakRatio, 1.5)}`,
        `readiness with a cluster, median of ${ROUNDS}: ${summary.clusterReadyMedianMs.toFixed(0)} ms ` +
          `(target ≤ 1000: ${summary.clusterReadyMedianMs <= 1000 ? 'met' : 'NOT met'})`,
        `load average: ${load()}`,
        '',
      ].join('\n'),
    );
    writeBenchResult('memory.json', {
      node: process.version,
      nodeArgs: NODE_ARGS,
      load: loadavg(),
      figures,
      summary,
    });
  } finally {
    await fake.close();
    await dir.remove();
  }
}

await main();
