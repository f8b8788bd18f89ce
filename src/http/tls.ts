/**
 * Serving certificates: loaded from files, checked, and reloaded without a
 * restart when they change. Kubernetes updates a Secret volume by swapping a
 * `..data` symlink in the folder, which a watch on the file itself can miss,
 * so the folder is watched and the files are also polled.
 */
import { errorMessage } from '../error-text.js';
import { createHash, X509Certificate, createPrivateKey } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { CapWarning } from './rate-limited-log.js';

/**
 * Protocols and cipher suites, for the listener and every reloaded context.
 * TLS 1.2 is limited to ECDHE key exchange with AEAD ciphers (AES-GCM,
 * ChaCha20-Poly1305), the set Kubernetes components and Go's crypto/tls
 * default to: no CBC, CCM, ARIA, Camellia or static RSA. Both ECDSA and RSA
 * variants are listed, so either kind of serving key works. TLS 1.3 keeps
 * Node's defaults, named here because a cipher string without TLS 1.3 suites
 * would switch TLS 1.3 off.
 */
export const TLS_POLICY = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'TLS_AES_128_GCM_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
  honorCipherOrder: true,
} as const;

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly clientCaFile?: string | undefined;
  /** With clientCaFile: the only client certificate names accepted, lower-cased (empty: any). */
  readonly clientAllowedNames?: readonly string[] | undefined;
}

export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer | undefined;
  readonly notAfter: Date;
  readonly subject: string;
  /** Hash of all the files' bytes: a change of any of them is a new material. */
  readonly digest: string;
}

/** Reads and checks the files; throws an Error with a one-line reason. */
export async function loadTlsMaterial(files: TlsFiles): Promise<TlsMaterial> {
  const read = async (path: string, what: string) => {
    try {
      return await readFile(path);
    } catch (err) {
      throw new Error(
        `cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`,
      );
    }
  };
  const cert = await read(files.certFile, 'certificate');
  const key = await read(files.keyFile, 'private key');
  const ca = files.clientCaFile ? await read(files.clientCaFile, 'client CA') : undefined;
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new Error(`${files.certFile} holds no PEM certificate`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new Error(`${files.keyFile} holds no PEM private key`);
  }
  if (!x509.checkPrivateKey(privateKey))
    throw new Error(`${files.keyFile} does not match the certificate in ${files.certFile}`);
  if (ca) {
    try {
      new X509Certificate(ca);
    } catch {
      throw new Error(`${files.clientCaFile} holds no PEM certificate`);
    }
  }
  const digest = createHash('sha256')
    .update(cert)
    .update(key)
    .update(ca ?? '')
    .digest('hex');
  return { cert, key, ca, notAfter: new Date(x509.validTo), subject: x509.subject, digest };
}

export interface CertificateWatcher {
  readonly current: () => TlsMaterial;
  readonly stop: () => void;
  /** Re-reads the files now (the watcher and poller call this too). */
  readonly reload: () => Promise<void>;
}

export interface CertificateWatchOptions {
  /** Called with each new, valid material. */
  readonly apply: (material: TlsMaterial) => void;
  readonly logger: Logger;
  /** How often the files are re-read besides the folder watch. */
  readonly pollMs?: number;
}

/**
 * Watches the folders of the files and polls them; calls `apply` with each new,
 * valid material. A half-written or mismatched pair is logged and retried at the
 * next event or poll, while the previous certificate keeps serving.
 */
export function watchCertificates(
  files: TlsFiles,
  initial: TlsMaterial,
  { apply, logger, pollMs = 10_000 }: CertificateWatchOptions,
): CertificateWatcher {
  let current = initial;

  const reloadOnce = async () => {
    let next: TlsMaterial;
    try {
      next = await loadTlsMaterial(files);
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'certificate reload failed; still serving the previous one');
      return;
    }
    if (next.digest === current.digest) return;
    apply(next);
    logger.info(
      {
        subject: next.subject,
        notAfter: next.notAfter.toISOString(),
        previousNotAfter: current.notAfter.toISOString(),
      },
      'serving certificate reloaded',
    );
    current = next;
  };

  const reload = serialised(reloadOnce);
  let debounce: NodeJS.Timeout | undefined;
  const onEvent = () => {
    if (debounce) clearTimeout(debounce);
    debounce = setTimeout(() => void reload(), 100);
    debounce.unref();
  };
  const watchers = watchFolders(foldersOf(files), onEvent, logger);
  const poller = setInterval(() => void reload(), pollMs);
  poller.unref();

  return {
    current: () => current,
    reload,
    stop: () => {
      clearInterval(poller);
      if (debounce) clearTimeout(debounce);
      for (const w of watchers) w.close();
    },
  };
}

/**
 * `task`, serialised: a call while it runs makes it run once more afterwards, so
 * a burst of events runs at most one reload plus one more. Every caller's
 * promise settles when the run that covers its call is over.
 */
function serialised(task: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  return () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await task();
      } while (again);
    })().finally(() => {
      running = undefined;
    });
    return running;
  };
}

const foldersOf = (files: TlsFiles): Set<string> =>
  new Set([
    dirname(files.certFile),
    dirname(files.keyFile),
    ...(files.clientCaFile ? [dirname(files.clientCaFile)] : []),
  ]);

/** Watches each folder; a folder that cannot be watched is logged and left to the poller. */
function watchFolders(folders: Iterable<string>, onEvent: () => void, logger: Logger): FSWatcher[] {
  const watchers: FSWatcher[] = [];
  for (const folder of folders) {
    try {
      const w = watch(folder, { persistent: false }, onEvent);
      w.on('error', (err) =>
        logger.warn({ folder, err: err.message }, 'certificate folder watch failed; polling continues'),
      );
      watchers.push(w);
    } catch (err) {
      logger.warn({ folder, err: errorMessage(err) }, 'cannot watch certificate folder; polling only');
    }
  }
  return watchers;
}

/** The names a client certificate answers to: its subject's CN(s) and its DNS SANs, lower-cased. */
export function clientCertificateNames(cert: {
  readonly subject?: Readonly<Record<string, string | string[] | undefined>> | undefined;
  readonly subjectaltname?: string | undefined;
}): string[] {
  const cn = cert.subject?.['CN'];
  const cns = cn === undefined ? [] : Array.isArray(cn) ? cn : [cn];
  const dns = (cert.subjectaltname ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4));
  return [...new Set([...cns, ...dns].map((n) => n.toLowerCase()))];
}

/**
 * --client-allowed-names: a `secureConnection` listener that closes, right
 * after the handshake and before any request is read, the connection of a
 * client whose certificate (already verified against --client-ca-file) names
 * none of `allowed` (lower-cased). No HTTP answer: the client learns nothing
 * but that it was disconnected; the log line (at most one per interval) says
 * which names it presented.
 */
export function clientNameGate(allowed: readonly string[], warn: CapWarning): (socket: TLSSocket) => void {
  const accepted = new Set(allowed);
  return (socket) => {
    const names = clientCertificateNames(socket.getPeerCertificate());
    if (names.some((n) => accepted.has(n))) return;
    warn(
      'client-name',
      { remoteAddress: socket.remoteAddress, clientNames: names.slice(0, 8) },
      'client certificate names none of --client-allowed-names; connection closed',
    );
    socket.destroy();
  };
}
