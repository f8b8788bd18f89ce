#!/usr/bin/env node
// `npm run test:image`: builds the container image from the committed tree and runs it the way the
// chart's pod runs it, then checks what an operator relies on and prints the figures.
//
//   1. base images: local, else pulled, else made here (scripts/image/base.mjs);
//   2. build from `git archive HEAD` (uncommitted files cannot leak in), npm's registry settings and
//      CA passed as build secrets; build time, image size;
//   3. layers: no shell, package manager or program but node, no npm/corepack/yarn/headers, no
//      npmrc or CA, exactly the lock file's production packages, only dist/ + node_modules/ +
//      package.json under /app, no key files; base pinned by digest (the stand-in by its own);
//   4. run with the chart's rendered arguments and security settings (scripts/image/chart.mjs),
//      certificates in a Secret-volume layout: /readyz, the fixture reviews against their goldens,
//      a certificate swap picked up without a restart, RSS idle and under a short load, and
//      `podman stop` ending it with exit 0 and a final log line.
//
// Flags: --no-cache (rebuild every layer), --rebuild-base (remake the local base images).
// IMAGE_TEST_REF picks another commit than HEAD. Needs root, podman, runc (and mmdebstrap when the
// base images must be made). Skips, saying why, only when no container can run on this machine.
import { execFileSync } from 'node:child_process';
import { Agent, request } from 'node:https';
import { get as httpGet } from 'node:http';
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { isDeepStrictEqual } from 'node:util';
import { Buffer } from 'node:buffer';
import { clearInterval, setInterval, setTimeout } from 'node:timers';
import { dockerfileBase, ensureBaseImages } from './image/base.mjs';
import { podRunPlan, podmanRunFlags, renderPod, NAMESPACE, RELEASE } from './image/chart.mjs';
import { imageLayers, installedPackages } from './image/layers.mjs';
import { podman, podmanOk, run, ulimitFlags } from './image/podman.mjs';
import { makeCa, secretVolume } from './image/secret-volume.mjs';

const TAG = 'localhost/gateway-routability-webhook:test';
const READY_LIMIT_S = 10;
const SWAP_LIMIT_S = 25; // the server polls every 10 s besides watching the folder
// A short load by default; IMAGE_TEST_LOAD_SECONDS / IMAGE_TEST_LOAD_CONNECTIONS for longer measurements.
const LOAD_SECONDS = Number(process.env.IMAGE_TEST_LOAD_SECONDS ?? 5);
const LOAD_CONCURRENCY = Number(process.env.IMAGE_TEST_LOAD_CONNECTIONS ?? 8);

const argv = process.argv.slice(2);
const noCache = argv.includes('--no-cache');
const rebuildBase = argv.includes('--rebuild-base');
const ref = process.env.IMAGE_TEST_REF ?? 'HEAD';

const results = [];
const figures = [];
const log = (msg) => process.stdout.write(`${msg}\n`);
function check(name, ok, detail = '') {
  results.push({ name, ok });
  log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
  return ok;
}
function figure(name, value) {
  figures.push([name, value]);
  log(`     ${name}: ${value}`);
}
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function skip(reason) {
  log(`image test SKIPPED: containers cannot run on this machine: ${reason}`);
  process.exit(0);
}

async function which(cmd) {
  return (await run('sh', ['-c', `command -v ${cmd}`])).code === 0;
}

/** The committed tree at `ref`, unpacked into a fresh folder. */
async function committedTree() {
  const dir = mkdtempSync(join(tmpdir(), 'image-tree-'));
  const r = await run('sh', ['-c', `git archive --format=tar "${ref}" | tar -x -C "${dir}"`]);
  if (r.code !== 0) throw new Error(`git archive ${ref} failed: ${r.stderr.trim()}`);
  const dirty = (await run('git', ['status', '--porcelain', '--untracked-files=no'])).stdout.trim();
  const commit = (await run('git', ['rev-parse', '--short', ref])).stdout.trim();
  log(`tree: ${ref} (${commit})${dirty ? '; uncommitted changes are NOT in the image' : ''}`);
  return dir;
}

/** Build secrets: the registry and CA the host's npm uses, in files readable by root only. */
function npmSecrets(dir) {
  const npmConfig = (key) => {
    try {
      const v = execFileSync('npm', ['config', 'get', key], { encoding: 'utf8' }).trim();
      return v && v !== 'null' && v !== 'undefined' ? v : undefined;
    } catch {
      return undefined;
    }
  };
  const lines = [];
  const flags = [];
  const registry = npmConfig('registry');
  if (registry) lines.push(`registry=${registry}`);
  const cafile = npmConfig('cafile');
  if (cafile && existsSync(cafile)) {
    lines.push('cafile=/run/secrets/npm-ca');
    flags.push('--secret', `id=npm-ca,src=${cafile}`);
  }
  const npmrc = join(dir, 'npmrc');
  writeFileSync(npmrc, `${lines.join('\n')}\n`, { mode: 0o600 });
  flags.push('--secret', `id=npmrc,src=${npmrc}`);
  return { flags, cafile };
}

async function build(tree, secrets, baseArgs) {
  const args = [
    'build',
    '--pull=never',
    '-t',
    TAG,
    ...baseArgs,
    ...secrets.flags,
    '-f',
    join(tree, 'Dockerfile'),
    tree,
  ];
  if (noCache) args.splice(1, 0, '--no-cache');
  const t0 = Date.now();
  const r = await podman(args, { timeoutMs: 1_200_000 });
  const ms = Date.now() - t0;
  if (r.code !== 0) {
    log(r.stdout.split('\n').slice(-40).join('\n'));
    log(r.stderr.split('\n').slice(-40).join('\n'));
    throw new Error(`podman build failed (${r.code})`);
  }
  const cachedSteps = (r.stdout.match(/^--> Using cache/gm) ?? []).length;
  return { ms, cachedSteps };
}

async function checkLayers(tree, secrets) {
  const layers = await imageLayers(TAG);
  const all = layers.flatMap((l) => l.files);
  figure('layers', `${layers.length}`);
  const forbidden = [
    /^usr\/local\/lib\/node_modules\/(npm|corepack)(\/|$)/,
    /^usr\/local\/bin\/(npm|npx|corepack|yarn|yarnpkg)$/,
    /^opt\/yarn/,
    /^usr\/local\/include\/./, // Debian's own /usr/local/include is an empty folder
  ];
  const tooling = all.filter((f) => forbidden.some((re) => re.test(f)));
  check(
    'no npm, corepack, yarn or headers in any layer',
    tooling.length === 0,
    tooling.slice(0, 5).join(', '),
  );
  const npmState = all.filter((f) => /(^|\/)\.npmrc$|^run\/secrets\/|^root\/\.npm(\/|$)/.test(f));
  check(
    'no npmrc, npm cache or build secret in any layer',
    npmState.length === 0,
    npmState.slice(0, 5).join(', '),
  );
  // No shell, no package manager, no other program: node is the only file in a bin folder.
  const programs = [...new Set(all.filter((f) => /^(usr\/)?(local\/)?s?bin\/./.test(f)))];
  check(
    'no shell, package manager or other program: node is the only file in a bin folder',
    isDeepStrictEqual(programs, ['usr/local/bin/node']),
    programs.slice(0, 8).join(', '),
  );
  const packaging = all.filter((f) =>
    /^(etc\/apt|var\/lib\/apt|var\/cache\/apt|usr\/lib\/apt|etc\/dpkg)(\/|$)|^var\/lib\/dpkg\/(status|info|available)$|^var\/lib\/dpkg\/info\//.test(
      f,
    ),
  );
  check(
    'no apt or dpkg database or configuration (only the status.d records SBOM scanners read)',
    packaging.length === 0,
    packaging.slice(0, 5).join(', '),
  );
  // The Debian packages the root carries are listed for SBOM scanners, each with its licence.
  const debs = all.filter((f) => f.startsWith('var/lib/dpkg/status.d/') && f !== 'var/lib/dpkg/status.d/');
  const noCopyright = debs
    .map((f) => f.slice('var/lib/dpkg/status.d/'.length))
    .filter((pkg) => !all.includes(`usr/share/doc/${pkg}/copyright`));
  check(
    'the runtime root lists its Debian packages (dpkg status.d), each with its copyright file',
    debs.length > 0 && noCopyright.length === 0,
    `${debs.length} packages${noCopyright.length ? `; no copyright: ${noCopyright.join(', ')}` : ''}`,
  );
  const whiteouts = all.filter((f) => /(^|\/)\.wh\./.test(f));
  check(
    'no file deleted by a later layer (it would still ship)',
    whiteouts.length === 0,
    whiteouts.slice(0, 5).join(', '),
  );

  const history = await podmanOk(['history', '--no-trunc', '--format', '{{.CreatedBy}}', TAG]);
  const env = await podmanOk(['image', 'inspect', '--format', '{{json .Config.Env}}', TAG]);
  // Registry settings, tokens or a CA would show in history only if passed as ARG/ENV instead of secrets.
  const leaked = /BEGIN CERTIFICATE|_authToken|_password|cafile=|npm_config_(registry|cafile|ca)=/i;
  check(
    'no registry setting, token or CA in image history or environment',
    !leaked.test(history) && !leaked.test(env),
  );
  if (secrets.cafile) figure('npm CA passed as a build secret', secrets.cafile);

  // /app holds the program and its production dependencies, nothing else.
  const appTop = new Set(
    all
      .filter((f) => f.startsWith('app/'))
      .map((f) => f.split('/')[1])
      .filter(Boolean),
  );
  check(
    '/app holds only dist, node_modules and package.json',
    isDeepStrictEqual([...appTop].sort(), ['dist', 'node_modules', 'package.json']),
    [...appTop].join(', '),
  );
  const lock = JSON.parse(readFileSync(join(tree, 'package-lock.json'), 'utf8'));
  const installed = installedPackages(all, 'app');
  const lockProd = Object.entries(lock.packages).filter(([path, p]) => path && !p.dev);
  const lockDev = Object.entries(lock.packages)
    .filter(([path, p]) => path && p.dev)
    .map(([path]) => path);
  const devShipped = lockDev.filter((p) => installed.has(p));
  check('no dev dependency in the image', devShipped.length === 0, devShipped.slice(0, 5).join(', '));
  const missing = lockProd.filter(([path, p]) => !installed.has(path) && !p.optional).map(([path]) => path);
  const unknown = [...installed].filter((p) => !lock.packages[p]);
  check(
    'every production package of the lock file, and nothing else',
    missing.length === 0 && unknown.length === 0,
    [...missing, ...unknown].slice(0, 5).join(', '),
  );
  figure('production packages', `${installed.size}`);
  const sources = all.filter(
    (f) =>
      /^app\/(dist|package\.json)/.test(f) &&
      /\.test\.js$|\.ts$|(^|\/)(test|tests|bench|docs)\//.test(f) &&
      !f.endsWith('.d.ts'),
  );
  check(
    'no tests, benchmarks, docs or TypeScript sources in /app/dist',
    sources.length === 0,
    sources.slice(0, 5).join(', '),
  );
  const keys = all.filter((f) => /\.(pem|key|crt|p12|pfx|jks)$|(^|\/)(id_rsa|id_ed25519)$/.test(f));
  check('no key or certificate file in any layer', keys.length === 0, keys.slice(0, 5).join(', '));
}

/** Resolves the host pid of the container's first process, and reads its /proc status. */
function procStatus(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(text)?.[1]?.trim();
  const kb = (name) => Number((field(name) ?? '0').split(/\s+/)[0]) * 1024;
  return {
    uid: field('Uid')?.split(/\s+/)[0],
    gid: field('Gid')?.split(/\s+/)[0],
    groups: field('Groups'),
    capEff: field('CapEff'),
    noNewPrivs: field('NoNewPrivs'),
    rss: kb('VmRSS'),
    hwm: kb('VmHWM'),
  };
}

function getStatus(port, path) {
  return new Promise((resolve) => {
    const req = httpGet({ host: '127.0.0.1', port, path, timeout: 1000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}

function post(agent, port, servername, ca, path, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        servername,
        ca,
        agent,
        path: `${path}?timeout=5s`,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The fingerprint of the certificate the server presents on a fresh connection. */
function servedFingerprint(port, servername, ca) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, servername, ca }, () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fp);
    });
    socket.on('error', () => resolve(undefined));
  });
}

async function exercise(tree) {
  const plan = podRunPlan(await renderPod(tree));
  figure('chart args', plan.args.join(' '));
  const work = mkdtempSync(join(tmpdir(), 'image-run-'));
  const name = `grw-image-test-${process.pid}`;
  try {
    const servername = `${RELEASE}-gateway-routability-webhook.${NAMESPACE}.svc`;
    const ca = await makeCa(join(work, 'ca'));
    const first = await ca.issue(servername);
    const tlsDir = join(work, 'tls');
    const volume = secretVolume(tlsDir, { gid: plan.fsGroup ?? 0, mode: plan.tlsDefaultMode });
    volume.update(first);

    const flags = [...(await ulimitFlags()), ...podmanRunFlags(plan, { tlsDir })];
    const t0 = Date.now();
    await podmanOk(['run', '-d', '--name', name, ...flags, TAG, ...plan.args], { timeoutMs: 120_000 });
    const port = (p) => async () =>
      Number((await podmanOk(['port', name, `${p}/tcp`])).trim().split(':').pop());
    const httpsPort = await port(plan.httpsPort)();
    const healthPort = await port(plan.healthPort)();
    let readyMs;
    while (Date.now() - t0 < READY_LIMIT_S * 1000) {
      if ((await getStatus(healthPort, plan.readinessPath)) === 200) {
        readyMs = Date.now() - t0;
        break;
      }
      await sleep(50);
    }
    if (
      !check(
        `${plan.readinessPath} answers 200 within ${READY_LIMIT_S} s of podman run`,
        readyMs !== undefined,
      )
    ) {
      log((await podman(['logs', name])).stderr);
      return;
    }
    figure('time to ready', seconds(readyMs));
    const pid = Number((await podmanOk(['inspect', '--format', '{{.State.Pid}}', name])).trim());
    const startedAt = (await podmanOk(['inspect', '--format', '{{.State.StartedAt}}', name])).trim();

    // The pod's security settings took effect on the process itself.
    const status = procStatus(pid);
    check(
      `runs as ${plan.uid}:${plan.gid} with no capabilities and no_new_privs`,
      status.uid === String(plan.uid) &&
        status.gid === String(plan.gid) &&
        /^0+$/.test(status.capEff ?? '') &&
        status.noNewPrivs === '1',
      `uid ${status.uid} gid ${status.gid} groups ${status.groups} CapEff ${status.capEff} NoNewPrivs ${status.noNewPrivs}`,
    );
    const rootMount = readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[4] === '/');
    check(
      'root filesystem is read-only',
      / ro[, ]/.test(` ${rootMount?.split(' ')[5]} `),
      rootMount?.split(' ')[5],
    );
    await sleep(1000);
    const idle = procStatus(pid).rss;
    figure('RSS idle (after ready)', mib(idle));

    // Every fixture review, under both webhooks, answered exactly as its golden.
    const agent = new Agent({ keepAlive: true, maxSockets: LOAD_CONCURRENCY });
    const folder = join(tree, 'test', 'fixtures', 'reviews');
    const fixtures = readdirSync(folder).filter((f) => f.endsWith('.json'));
    const mismatches = [];
    for (const file of fixtures) {
      const body = readFileSync(join(folder, file), 'utf8');
      for (const webhook of ['validate', 'mutate']) {
        const res = await post(agent, httpsPort, servername, ca.caPem, `/${webhook}`, body);
        const golden = JSON.parse(
          readFileSync(join(folder, 'golden', `${file.replace(/\.json$/, '')}.${webhook}.json`), 'utf8'),
        );
        let answer;
        try {
          answer = JSON.parse(res.text);
        } catch {
          answer = res.text;
        }
        if (res.status !== 200 || !isDeepStrictEqual(answer, golden))
          mismatches.push(`${file} /${webhook} (${res.status})`);
      }
    }
    check(
      `${fixtures.length * 2} fixture reviews answered exactly as their goldens`,
      fixtures.length > 0 && mismatches.length === 0,
      mismatches.slice(0, 5).join(', '),
    );

    // A renewed certificate, swapped in the way the kubelet updates a Secret volume.
    const second = await ca.issue(servername);
    const swapStart = Date.now();
    volume.update(second);
    let swapMs;
    while (Date.now() - swapStart < SWAP_LIMIT_S * 1000) {
      if ((await servedFingerprint(httpsPort, servername, ca.caPem)) === second.fingerprint) {
        swapMs = Date.now() - swapStart;
        break;
      }
      await sleep(100);
    }
    const sameProcess = (
      await podmanOk(['inspect', '--format', '{{.State.Pid}} {{.State.StartedAt}} {{.RestartCount}}', name])
    ).trim();
    check(
      'certificate swap on the mount served without a restart',
      swapMs !== undefined && sameProcess === `${pid} ${startedAt} 0`,
      swapMs === undefined ? `old certificate still served after ${SWAP_LIMIT_S} s` : '',
    );
    if (swapMs !== undefined) figure('certificate swap picked up after', seconds(swapMs));

    // A short load: the fixtures round-robin from LOAD_CONCURRENCY keep-alive connections.
    const bodies = fixtures.map((f) => readFileSync(join(folder, f), 'utf8'));
    let sent = 0;
    let failed = 0;
    let peak = 0;
    const loadEnd = Date.now() + LOAD_SECONDS * 1000;
    const sampler = setInterval(() => (peak = Math.max(peak, procStatus(pid).rss)), 200);
    await Promise.all(
      Array.from({ length: LOAD_CONCURRENCY }, async (_, w) => {
        for (let i = w; Date.now() < loadEnd; i += LOAD_CONCURRENCY) {
          const res = await post(
            agent,
            httpsPort,
            servername,
            ca.caPem,
            i % 2 ? '/mutate' : '/validate',
            bodies[i % bodies.length],
          ).catch(() => ({ status: 0 }));
          sent += 1;
          if (res.status !== 200) failed += 1;
        }
      }),
    );
    clearInterval(sampler);
    agent.destroy();
    const after = procStatus(pid);
    peak = Math.max(peak, after.rss);
    check(
      `${sent} reviews under load, none failed`,
      sent > 0 && failed === 0,
      failed ? `${failed} failed` : '',
    );
    figure(
      'load',
      `${sent} reviews in ${LOAD_SECONDS} s from ${LOAD_CONCURRENCY} connections (${Math.round(sent / LOAD_SECONDS)}/s)`,
    );
    figure('RSS under load (peak sampled)', mib(peak));
    figure('RSS high-water mark (VmHWM)', mib(after.hwm));
    if (plan.memoryRequestBytes)
      figure(
        'chart memory request / limit',
        `${mib(plan.memoryRequestBytes)} / ${plan.memoryLimitBytes ? mib(plan.memoryLimitBytes) : 'none'}`,
      );
    // The chart's request is sized from these figures (docs/operations.md): growth past it needs a new look.
    check(
      'peak RSS within the chart memory request',
      !plan.memoryRequestBytes || after.hwm < plan.memoryRequestBytes,
    );

    // SIGTERM as the kubelet sends it after preStop, with the rest of the grace period to go.
    const graceLeft = Math.max(1, plan.graceSeconds - plan.preStopSleepSeconds);
    const stopStart = Date.now();
    await podmanOk(['stop', '--time', String(graceLeft), name], { timeoutMs: (graceLeft + 30) * 1000 });
    const stopMs = Date.now() - stopStart;
    const state = JSON.parse(await podmanOk(['inspect', '--format', '{{json .State}}', name]));
    const logs = await podman(['logs', name]);
    const lines = `${logs.stdout}${logs.stderr}`.split('\n').filter(Boolean);
    const parsed = lines.map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return { msg: l };
      }
    });
    const last = parsed.at(-1);
    const listening = parsed.find((l) => l.msg === 'listening');
    if (listening?.time && state.StartedAt)
      figure('process start to listening', seconds(listening.time - Date.parse(state.StartedAt)));
    check(
      `podman stop ends it with exit 0 within the ${graceLeft} s left of the grace period`,
      state.ExitCode === 0 && !state.OOMKilled && stopMs < graceLeft * 1000,
      `exit ${state.ExitCode}${state.OOMKilled ? ', OOM killed' : ''}`,
    );
    figure('time to exit on SIGTERM (podman stop)', seconds(stopMs));
    check('final log line says it stopped', last?.msg === 'stopped', JSON.stringify(last));
    check(
      'the log shows the certificate reload',
      parsed.some((l) => l.msg === 'serving certificate reloaded'),
    );
    const errors = parsed.filter((l) => typeof l.level === 'number' && l.level >= 50);
    check(
      'no error or fatal log line',
      errors.length === 0,
      errors
        .slice(0, 3)
        .map((e) => e.msg)
        .join('; '),
    );
  } finally {
    await podman(['rm', '-f', '--time', '0', name]);
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The CLI from the image, as docs/install-reference.md shows it: `podman run … TAG check -f …` on a mounted
 * manifest, with the pod's restrictions and no network. The fixture's out-of-range Cluster address
 * must be reported with its field and the run must exit 1 (violations found).
 */
async function cliFromImage(tree) {
  // A folder of its own, readable by the image's non-root user (the tree's temporary folder is 0700).
  const dir = mkdtempSync(join(tmpdir(), 'image-cli-'));
  chmodSync(dir, 0o755);
  const manifest = join(dir, 'gateways.yaml');
  writeFileSync(manifest, readFileSync(join(tree, 'test/fixtures/check/manifests/gateways.yaml')), {
    mode: 0o644,
  });
  const flags = [
    ...(await ulimitFlags()),
    '--rm',
    '--read-only',
    '--network=none',
    '--user',
    '65532:65532',
    '--cap-drop=ALL',
    '--security-opt',
    'no-new-privileges',
    '-v',
    `${manifest}:/work/gateways.yaml:ro`,
  ];
  // Nothing to exec into: a shell entrypoint cannot start.
  for (const shell of ['/bin/sh', '/bin/bash', 'sh']) {
    const r = await podman(['run', ...flags, '--entrypoint', shell, TAG, '-c', 'true'], {
      timeoutMs: 120_000,
    });
    check(`the image has no shell: --entrypoint ${shell} does not start`, r.code !== 0, `exit ${r.code}`);
  }
  const help = await podman(['run', ...flags, TAG, '--help'], { timeoutMs: 120_000 });
  check(
    'the image runs the CLI: --help exits 0 and lists check',
    help.code === 0 && /\bcheck\b/.test(help.stdout),
    help.stderr,
  );
  const args = [
    'check',
    '-f',
    '/work/gateways.yaml',
    '--service-cidr',
    '10.96.0.0/12',
    '--gep-revision',
    'provisional',
  ];
  const r = await podman(['run', ...flags, TAG, ...args], { timeoutMs: 120_000 });
  check(
    'the image runs the CLI: check on a mounted manifest exits 1 naming spec.addresses[1].value',
    r.code === 1 && r.stdout.includes('spec.addresses[1].value: Invalid value: "192.168.1.5"'),
    `exit ${r.code}: ${(r.stdout + r.stderr).slice(0, 400)}`,
  );
  rmSync(dir, { recursive: true, force: true });
}

async function main() {
  for (const tool of ['podman', 'git', 'tar', 'openssl']) {
    if (!(await which(tool))) {
      if (tool === 'podman') skip('podman is not installed (.ci/run installs it with apt-get on Debian)');
      throw new Error(`${tool} is required`);
    }
  }
  const tree = await committedTree();
  const secretsDir = mkdtempSync(join(tmpdir(), 'image-secrets-'));
  try {
    const pinned = dockerfileBase(readFileSync(join(tree, 'Dockerfile'), 'utf8'));
    if (!check('the Dockerfile pins its base image by digest', pinned !== undefined))
      throw new Error('Dockerfile: no `ARG NODE_IMAGE=name:tag@sha256:<64 hex>`');
    const base = await ensureBaseImages({ rebuild: rebuildBase, pinned, log });
    const probe = await podman(
      ['run', '--rm', ...(await ulimitFlags()), '--network=none', base.node, 'true'],
      { timeoutMs: 120_000 },
    );
    if (probe.code !== 0)
      skip(`a plain ${base.node} container does not start: ${probe.stderr.trim().split('\n').pop()}`);
    figure(
      'base image',
      `${base.node} (node ${base.nodeVersion})${base.standIn ? `, a stand-in${base.made ? ' made now' : ' made here'}, pinned by its own digest (the Dockerfile pins ${pinned})` : ', the Dockerfile default'}`,
    );

    const secrets = npmSecrets(secretsDir);
    const built = await build(tree, secrets, base.buildArgs);
    figure(
      'build time',
      `${seconds(built.ms)}${built.cachedSteps ? ` (${built.cachedSteps} steps from cache)` : ' (no cached steps)'}`,
    );
    const size = Number((await podmanOk(['image', 'inspect', '--format', '{{.Size}}', TAG])).trim());
    figure('image size', `${mb(size)} (${mib(size)})`);
    await checkLayers(tree, secrets);
    await exercise(tree);
    await cliFromImage(tree);
  } finally {
    rmSync(secretsDir, { recursive: true, force: true });
    rmSync(tree, { recursive: true, force: true });
  }
  const failed = results.filter((r) => !r.ok);
  log(`\nimage test: ${results.length - failed.length} passed, ${failed.length} failed`);
  for (const [name, value] of figures) log(`  ${name}: ${value}`);
  process.exit(failed.length === 0 ? 0 : 1);
}

main().catch((err) => {
  log(`image test ERROR: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
