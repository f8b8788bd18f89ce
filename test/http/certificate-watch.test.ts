/**
 * Certificate reload in-process, with a poll interval of an hour: whatever is
 * picked up here was seen by the folder watch, the path that makes a rotation
 * take about 0.2 s instead of up to one poll interval.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { generateCertificates } from '../../src/certs/generate.js';
import {
  loadTlsMaterial,
  watchCertificates,
  type CertificateWatcher,
  type TlsFiles,
  type TlsMaterial,
} from '../../src/http/tls.js';
import { eventually } from '../kit/eventually.js';

/** Never fires during a test: a reload seen here came from the watch. */
const POLL_MS = 60 * 60 * 1000;
/** Generous for a loaded machine; the watch itself reacts in about 0.1 s. */
const SEEN_WITHIN_MS = 10_000;

const newPair = () => generateCertificates({ service: 'gateway-routability-webhook', namespace: 'test' });

function recordingLogger() {
  const lines: { level: string; msg: string; fields: unknown }[] = [];
  const at = (level: string) => (fields: unknown, msg: string) => lines.push({ level, msg, fields });
  const logger = { info: at('info'), warn: at('warn') } as unknown as Logger;
  return { logger, lines };
}

let dir: string;
let watcher: CertificateWatcher | undefined;
afterEach(() => {
  watcher?.stop();
  watcher = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function start(files: TlsFiles) {
  const applied: TlsMaterial[] = [];
  const { logger, lines } = recordingLogger();
  const initial = await loadTlsMaterial(files);
  watcher = watchCertificates(files, initial, { apply: (m) => applied.push(m), logger, pollMs: POLL_MS });
  return { applied, lines, initial, watcher };
}

describe('certificate folder watch', () => {
  it('applies new files written in place, long before the first poll', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rw-watch-'));
    const files = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
    const first = await newPair();
    writeFileSync(files.certFile, first.cert);
    writeFileSync(files.keyFile, first.key);
    const { applied, lines, initial, watcher: w } = await start(files);

    const second = await newPair();
    writeFileSync(files.keyFile, second.key);
    writeFileSync(files.certFile, second.cert);
    await eventually(() => applied.length > 0, 'the certificate applied', SEEN_WITHIN_MS, 20);

    const expected = await loadTlsMaterial(files);
    expect(applied.at(-1)?.digest).toBe(expected.digest);
    expect(applied.at(-1)?.digest).not.toBe(initial.digest);
    expect(w.current().digest).toBe(expected.digest);
    expect(lines.filter((l) => l.msg === 'serving certificate reloaded')).toHaveLength(applied.length);
  });

  it('follows a Secret volume ..data symlink swap', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rw-watch-'));
    const version = async (name: string) => {
      const pair = await newPair();
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, 'tls.crt'), pair.cert);
      writeFileSync(join(dir, name, 'tls.key'), pair.key);
      symlinkSync(name, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    };
    await version('..v1');
    symlinkSync('..data/tls.crt', join(dir, 'tls.crt'));
    symlinkSync('..data/tls.key', join(dir, 'tls.key'));
    const files = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
    const { applied, initial } = await start(files);

    await version('..v2');
    await eventually(() => applied.length > 0, 'the certificate applied', SEEN_WITHIN_MS, 20);
    expect(applied.at(-1)?.digest).toBe((await loadTlsMaterial(files)).digest);
    expect(applied.at(-1)?.digest).not.toBe(initial.digest);
  });

  it('keeps the previous certificate while the files are broken, and applies them once fixed', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rw-watch-'));
    const files = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
    const first = await newPair();
    writeFileSync(files.certFile, first.cert);
    writeFileSync(files.keyFile, first.key);
    const { applied, lines, initial, watcher: w } = await start(files);

    writeFileSync(files.certFile, 'garbage');
    await eventually(
      () => lines.some((l) => l.msg === 'certificate reload failed; still serving the previous one'),
      'the reload failure logged',
      SEEN_WITHIN_MS,
      20,
    );
    expect(applied).toHaveLength(0);
    expect(w.current().digest).toBe(initial.digest);
    const failure = lines.find((l) => l.level === 'warn');
    expect(failure?.fields).toEqual({ err: `${files.certFile} holds no PEM certificate` });

    // A key that belongs to another certificate is refused the same way.
    const other = await newPair();
    writeFileSync(files.certFile, other.cert);
    await eventually(
      () =>
        lines.some(
          (l) =>
            (l.fields as { err?: string }).err ===
            `${files.keyFile} does not match the certificate in ${files.certFile}`,
        ),
      'the reload error logged',
      SEEN_WITHIN_MS,
      20,
    );
    expect(applied).toHaveLength(0);

    writeFileSync(files.keyFile, other.key);
    await eventually(() => applied.length > 0, 'the certificate applied', SEEN_WITHIN_MS, 20);
    expect(w.current().digest).toBe((await loadTlsMaterial(files)).digest);
  });

  it('reload() re-reads at once and ignores files that did not change', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rw-watch-'));
    const files = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
    const first = await newPair();
    writeFileSync(files.certFile, first.cert);
    writeFileSync(files.keyFile, first.key);
    const { applied, watcher: w } = await start(files);
    await w.reload();
    expect(applied).toHaveLength(0);
    w.stop();
    const second = await newPair();
    writeFileSync(files.keyFile, second.key);
    writeFileSync(files.certFile, second.cert);
    await w.reload();
    expect(applied).toHaveLength(1);
    expect(w.current().subject).toBe(applied[0]?.subject);
  });
});
