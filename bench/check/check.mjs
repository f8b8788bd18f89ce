/**
 * `npm run bench -- check`: how fast `routability-webhook check` reads manifests,
 * next to the `yaml` package alone parsing the very same input in the same run.
 *
 * - 10,000 Gateway documents (a mix of valid and invalid addresses) as one
 *   multi-document stream (`-f -`), and as 1,000 files of 10 documents in a
 *   temporary folder (`-f DIR`).
 * - Two bare parses: `parseAllDocuments` (the library's usual call) and the
 *   `Parser` + `Composer` stream that `check` itself uses (a little faster on
 *   big streams: it never holds every document at once). Both use check's
 *   parse options. The ratio is against the faster of the two.
 * - Each round runs all three in a rotated order; the figure is the median
 *   of the rounds.
 * - Start-up: the built CLI answering a one-Gateway file, next to `node -e 0`.
 *
 * Runs the built code in dist/ (the npm script builds first).
 * Start-up is measured first, before the corpus fills this process's heap.
 * Environment: BENCH_ROUNDS (default 5), BENCH_STARTUP_RUNS (default 21).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Composer, parseAllDocuments, Parser } from 'yaml';
import { runCheck } from '../../dist/cli/check.js';
import { YAML_OPTIONS } from '../../dist/check/documents.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const DOCUMENTS = 10_000;
const FILES = 1_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const STARTUP_RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 21);
const RANGES = ['--service-cidr', '10.96.0.0/12,fd00:10:96::/112'];

/** Address entries cycling through valid and invalid cases: 5,000 of the 10,000 Gateways fail (6,000 violations). */
const ADDRESS_CASES = [
  (i) => [`- type: IPAddress`, `  value: 10.96.${(i >> 8) & 255}.${i & 255 || 1}`, `  routability: Cluster`],
  (i) => [`- type: IPAddress`, `  value: 203.0.113.${i % 250}`, `  routability: External`],
  (i) => [`- type: Hostname`, `  value: gw-${i}.example.com`, `  routability: External`],
  (i) => [`- type: IPAddress`, `  value: 192.168.${i % 250}.7`, `  routability: Cluster`], // outside the range
  () => [`- type: IPAddress`, `  routability: Cluster`], // value-less: valid
  (i) => [`- type: IPAddress`, `  value: 10.97.0.${i % 250}`, `  routability: External`], // inside the range
  (i) => [`- type: IPAddress`, `  value: 10.96.1.${i % 250}`, `  routability: cluster`], // typo
  (i) => [`- type: Hostname`, `  value: gw-${i}.apps.svc.cluster.local`, `  routability: Cluster`], // valid: hostnames are not resolved
  (i) => [`- type: IPAddress`, `  value: fd00:10:96::${(i % 4000).toString(16)}`, `  routability: Cluster`],
  (i) => [`- type: example.com/Named`, `  value: pool-${i}`],
];

function gateway(i) {
  const addresses = [
    ADDRESS_CASES[i % ADDRESS_CASES.length](i),
    ADDRESS_CASES[(i * 7 + 3) % ADDRESS_CASES.length](i),
  ];
  return [
    '---',
    'apiVersion: gateway.networking.k8s.io/v1',
    'kind: Gateway',
    'metadata:',
    `  name: gw-${i}`,
    `  namespace: team-${i % 50}`,
    '  labels:',
    '    app.kubernetes.io/managed-by: Helm',
    `    app.kubernetes.io/instance: release-${i % 20}`,
    'spec:',
    '  gatewayClassName: example',
    '  listeners:',
    '    - name: http',
    '      protocol: HTTP',
    '      port: 80',
    '      allowedRoutes:',
    '        namespaces:',
    '          from: Same',
    '    - name: https',
    '      protocol: HTTPS',
    '      port: 443',
    `      hostname: "*.team-${i % 50}.example.com"`,
    '      tls:',
    '        mode: Terminate',
    '        certificateRefs:',
    `          - name: cert-${i}`,
    '  addresses:',
    ...addresses.flat().map((l) => `    ${l}`),
    '',
  ].join('\n');
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function sink() {
  return new Writable({ write: (_chunk, _enc, cb) => cb() });
}

async function check(argv, stdin) {
  const io = {
    stdin: Readable.from(stdin === undefined ? [] : [Buffer.from(stdin)]),
    stdout: sink(),
    stderr: sink(),
    env: {},
    cwd: ROOT,
  };
  const code = await runCheck(argv, io);
  if (code !== 1) throw new Error(`check exited ${code}, expected 1 (the corpus has violations)`);
}

/** `parseAllDocuments`: every document of a stream, as an array. */
function parseAll(text) {
  return parseAllDocuments(text, YAML_OPTIONS).length;
}

/** The same parse, one document at a time (what check does). */
function parseStreamed(text) {
  let n = 0;
  for (const doc of new Composer(YAML_OPTIONS).compose(new Parser().parse(text), true, text.length))
    n += doc ? 1 : 0;
  return n;
}

function bare(parse, texts) {
  let documents = 0;
  for (const text of texts()) documents += parse(text);
  if (documents !== DOCUMENTS) throw new Error(`parsed ${documents} documents`);
}

/** Reading the files is part of the bare figure too: check reads them as well. */
function* filesIn(dir) {
  for (const name of readdirSync(dir).sort()) yield readFileSync(join(dir, name), 'utf8');
}

async function time(fn) {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Runs every variant once per round, rotating the order; returns each one's rounds and median. */
async function rounds(variants) {
  const names = Object.keys(variants);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) await variants[n](); // warm-up: JIT and file cache, not counted
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < names.length; k++) {
      const n = names[(round + k) % names.length];
      times[n].push(await time(variants[n]));
    }
  }
  return Object.fromEntries(names.map((n) => [n, { median: median(times[n]), rounds: times[n] }]));
}

function wall(args) {
  const start = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - start;
  if (r.status !== 0 && r.status !== 1) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

function fmt(ms) {
  return `${ms.toFixed(0)} ms`;
}

const dir = mkdtempSync(join(tmpdir(), 'bench-check-'));
try {
  // Start-up first, before the corpus fills this process's heap.
  const one = join(dir, 'one.yaml');
  writeFileSync(one, gateway(3));
  const node = [];
  const cli = [];
  wall(['-e', '0']);
  wall([CLI, 'check', '-f', one, ...RANGES]);
  for (let i = 0; i < STARTUP_RUNS; i++) {
    node.push(wall(['-e', '0']));
    cli.push(wall([CLI, 'check', '-f', one, ...RANGES]));
  }
  console.log(
    `start-up (${STARTUP_RUNS} runs each, alternating, median wall time; node ${process.version}):`,
  );
  console.log(`| node -e 0 | ${fmt(median(node))} |`);
  console.log(`| node dist/cli/main.js check -f one.yaml | ${fmt(median(cli))} |`);
  console.log(`| check's own start-up and work | ${fmt(median(cli) - median(node))} |`);

  const docs = Array.from({ length: DOCUMENTS }, (_, i) => gateway(i));
  const stream = docs.join('');
  const manifests = join(dir, 'manifests');
  const perFile = DOCUMENTS / FILES;
  mkdirSync(manifests);
  for (let f = 0; f < FILES; f++)
    writeFileSync(
      join(manifests, `gw-${String(f).padStart(4, '0')}.yaml`),
      docs.slice(f * perFile, (f + 1) * perFile).join(''),
    );

  console.log('');
  console.log(
    `throughput: ${DOCUMENTS} Gateways, ${(stream.length / 1e6).toFixed(1)} MB; ${ROUNDS} rounds, median`,
  );
  const results = [];
  results.push({
    input: 'one stream (-f -)',
    ...(await rounds({
      parseAll: () => bare(parseAll, () => [stream]),
      parseStreamed: () => bare(parseStreamed, () => [stream]),
      check: () => check(['-f', '-', ...RANGES], stream),
    })),
  });
  results.push({
    input: `${FILES} files (-f DIR)`,
    ...(await rounds({
      parseAll: () => bare(parseAll, () => filesIn(manifests)),
      parseStreamed: () => bare(parseStreamed, () => filesIn(manifests)),
      check: () => check(['-f', manifests, ...RANGES]),
    })),
  });

  console.log(
    '| input | yaml parseAllDocuments | yaml Parser+Composer | check | check docs/s | check / faster parse |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of results) {
    const faster = Math.min(r.parseAll.median, r.parseStreamed.median);
    console.log(
      `| ${r.input} | ${fmt(r.parseAll.median)} | ${fmt(r.parseStreamed.median)} | ${fmt(r.check.median)} | ${Math.round(DOCUMENTS / (r.check.median / 1000))} | ${(r.check.median / faster).toFixed(2)}× |`,
    );
  }
  console.log('');
  for (const r of results)
    for (const n of ['parseAll', 'parseStreamed', 'check'])
      console.log(`rounds, ${r.input}, ${n}: ${r[n].rounds.map(fmt).join(', ')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
