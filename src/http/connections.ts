/**
 * Connection guard for the HTTPS listener: a cap on open connections, a
 * deadline for the TLS handshake, and no TLS state for a connection that has
 * not sent a byte.
 *
 * Why each part:
 * - Node's TLS layer keeps roughly 40 KiB of native memory per connection, and
 *   for a connection closed before its handshake the memory is returned only
 *   slowly (measured: 6,000 such connections left the process at 376 MiB).
 *   The guard holds a new connection as a plain socket until its first bytes
 *   (the ClientHello) arrive and only then hands it to TLS, so connections
 *   that never start TLS cost a plain socket.
 * - At the cap, the guard makes room instead of refusing the newcomer: it
 *   closes the oldest connection that has not finished its handshake, else
 *   the one idle the longest. An attacker holding connections open can then
 *   not lock the apiserver out; a connection with a request in flight is
 *   never closed. Only when every connection is busy is the new one refused.
 * - The handshake deadline (controller-runtime uses 32 s) applies twice: to
 *   the wait for the first bytes, and to the TLS handshake itself (Node's
 *   `handshakeTimeout`, set on the server options).
 * - At shutdown the guard, not Node, closes the idle connections (drain()).
 *   Node's own sweep, which `server.close()` runs, destroys every connection
 *   whose answer has been ended, even when the answer's bytes are still on
 *   their way out (TLS encrypts and writes them a moment later): the client
 *   then sees its connection hang up after the server has logged the answer.
 *   The drain closes a connection only when its last answer has been written
 *   out and it has carried no request for DRAIN_IDLE_MS, and closes it with a
 *   FIN after what it had to send. A connection in use meanwhile gets its
 *   answers with `Connection: close` (app.ts) and is closed by Node after them.
 */
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import type { LimitMetrics, RefusalReason } from './limit-metrics.js';
import type { CapWarning } from './rate-limited-log.js';

/** controller-runtime's webhook server allows 32 s for the TLS handshake. */
export const HANDSHAKE_TIMEOUT_MS = 32_000;

/** A handshake this old is stalled, not slow: first to go when room is needed. */
const STALLED_HANDSHAKE_MS = 2_000;
/** Idle this long, a keep-alive connection is parked rather than in use. */
const LONG_IDLE_MS = 10_000;
/**
 * At shutdown, a connection idle this long is closed. A client in the middle
 * of a series of requests sends its next one within moments and gets its
 * answer with `Connection: close` instead of a closed connection.
 */
export const DRAIN_IDLE_MS = 1_000;
/** How often the drain looks for connections that became idle enough. */
const DRAIN_EVERY_MS = 100;

export interface ConnectionLimits {
  readonly maxConnections: number;
  readonly handshakeTimeoutMs: number;
}

/** One connection, from accept to close. */
export interface Tracked {
  readonly raw: Socket;
  state: 'waiting' | 'handshaking' | 'established';
  /** Requests being answered on it (HTTP/1.1: at most one, pipelining aside). */
  busy: number;
  /** When it last became idle (or was accepted). */
  since: number;
  tls?: TLSSocket;
  /** Closed by the drain (once). */
  drained?: boolean;
}

export interface ConnectionGuard {
  readonly open: () => number;
}

/** What the guard's handlers share. */
interface Guard {
  readonly server: TlsServer;
  readonly limits: ConnectionLimits;
  readonly metrics: LimitMetrics;
  readonly warn: CapWarning;
  readonly now: () => number;
  /** Insertion order is acceptance order: the first match in a scan is the oldest. */
  readonly tracked: Map<Socket, Tracked>;
  /** Connections closed to make room (their TLS error is not a second refusal). */
  readonly evicted: WeakSet<Socket>;
  /** Node's own TLS 'connection' listeners, called once the first bytes arrive. */
  readonly tlsListeners: ((socket: Socket) => void)[];
  /** The drain's timer, once shutdown started. */
  drainTimer?: NodeJS.Timeout;
}

export function guardConnections(
  server: TlsServer,
  limits: ConnectionLimits,
  deps: { metrics: LimitMetrics; warn: CapWarning; now?: () => number },
): ConnectionGuard {
  const guard: Guard = {
    server,
    limits,
    metrics: deps.metrics,
    warn: deps.warn,
    now: deps.now ?? (() => performance.now()),
    tracked: new Map(),
    evicted: new WeakSet(),
    tlsListeners: server.listeners('connection') as ((socket: Socket) => void)[],
  };
  server.removeAllListeners('connection');
  server.on('connection', (raw: Socket) => accept(guard, raw));
  server.on('secureConnection', (socket: TLSSocket) => established(guard, socket));
  server.on('tlsClientError', (err: Error & { code?: string }, socket: TLSSocket) =>
    handshakeFailed(guard, err, socket),
  );
  server.on(
    'request',
    (request: { socket: TLSSocket }, response: { once(e: 'close', f: () => void): void }) =>
      answering(guard, request.socket, response),
  );
  // server.close() calls this (Node 19+): the drain replaces Node's sweep.
  (server as TlsServer & { closeIdleConnections: () => void }).closeIdleConnections = () => drain(guard);
  return { open: () => guard.tracked.size };
}

/**
 * Shutdown: closes each connection once it is idle enough (DRAIN_IDLE_MS),
 * now and every DRAIN_EVERY_MS until the listener has closed. Each sweep runs
 * after the event loop's poll phase, so bytes of a request that had already
 * arrived are read (and the connection counted busy) first.
 */
function drain(guard: Guard): void {
  if (guard.drainTimer) return;
  const sweep = () => {
    const at = guard.now();
    for (const t of guard.tracked.values())
      if (t.busy === 0 && t.state !== 'handshaking' && !t.drained && at - t.since >= DRAIN_IDLE_MS)
        closeIdle(t);
  };
  const later = () => void setImmediate(sweep);
  later();
  guard.drainTimer = setInterval(later, DRAIN_EVERY_MS);
  guard.drainTimer.unref();
  guard.server.once('close', () => clearInterval(guard.drainTimer));
}

/**
 * An established connection is ended (its pending bytes, then TLS
 * close_notify and a FIN) and destroyed if its peer does not close within
 * DRAIN_IDLE_MS; one that has not sent a byte has nothing of ours to lose and
 * is destroyed. (One in its handshake is left to finish it and send its
 * request: the handshake deadline or the shutdown timeout bounds it.)
 */
function closeIdle(t: Tracked): void {
  t.drained = true;
  if (!t.tls) {
    t.raw.destroy();
    return;
  }
  const socket = t.tls;
  socket.end();
  setTimeout(() => socket.destroy(), DRAIN_IDLE_MS).unref();
}

const rawOf = (socket: TLSSocket) => (socket as TLSSocket & { _parent?: Socket })._parent;

function refuse(guard: Guard, reason: RefusalReason, socket: Socket | TLSSocket): void {
  guard.metrics.refused.inc({ reason });
  socket.destroy();
}

function evict(guard: Guard, reason: RefusalReason, t: Tracked): void {
  guard.evicted.add(t.raw);
  guard.warn(
    'evicted',
    { open: guard.tracked.size, max: guard.limits.maxConnections },
    'connection limit reached',
  );
  refuse(guard, reason, t.tls ?? t.raw);
}

/**
 * Which connection to close to make room for one more, in this order: a
 * handshake stalled for a while (a real one takes milliseconds); a connection
 * idle for long (the apiserver reuses its connections within moments); the
 * oldest handshake of any age (a flood of new connections then evicts its
 * own); the connection idle the longest. A connection answering a request is
 * never chosen: undefined when every one is.
 */
export function evictionFor(
  connections: Iterable<Tracked>,
  at: number,
): { reason: RefusalReason; victim: Tracked } | undefined {
  let idlest: Tracked | undefined;
  let oldestHandshake: Tracked | undefined;
  for (const t of connections) {
    if (t.state !== 'established') {
      if (at - t.since > STALLED_HANDSHAKE_MS) return { reason: 'evicted-handshake', victim: t };
      oldestHandshake ??= t;
    } else if (t.busy === 0 && (!idlest || t.since < idlest.since)) idlest = t;
  }
  if (idlest && at - idlest.since > LONG_IDLE_MS) return { reason: 'evicted-idle', victim: idlest };
  if (oldestHandshake) return { reason: 'evicted-handshake', victim: oldestHandshake };
  if (idlest) return { reason: 'evicted-idle', victim: idlest };
  return undefined;
}

/** A new TCP connection: made room for (or refused), then held as a plain socket until its first bytes. */
function accept(guard: Guard, raw: Socket): void {
  const { tracked, limits, metrics, warn } = guard;
  // A reset before the hand-over must not become an unhandled 'error'.
  raw.on('error', () => {});
  if (tracked.size >= limits.maxConnections) {
    const eviction = evictionFor(tracked.values(), guard.now());
    if (!eviction) {
      warn(
        'refused',
        { open: tracked.size, max: limits.maxConnections },
        'connection limit reached with every connection busy; refusing a new one',
      );
      return refuse(guard, 'connection-limit', raw);
    }
    evict(guard, eviction.reason, eviction.victim);
  }
  const entry: Tracked = { raw, state: 'waiting', busy: 0, since: guard.now() };
  tracked.set(raw, entry);
  metrics.connectionsOpen.set(tracked.size);
  const timer = setTimeout(() => {
    if (entry.state !== 'waiting') return;
    warn(
      'handshake-timeout',
      { timeoutMs: limits.handshakeTimeoutMs },
      'TLS handshake did not start in time',
    );
    refuse(guard, 'handshake-timeout', raw);
  }, limits.handshakeTimeoutMs);
  timer.unref();
  raw.once('close', () => {
    clearTimeout(timer);
    tracked.delete(raw);
    metrics.connectionsOpen.set(tracked.size);
  });
  raw.once('data', (first: Buffer) => {
    clearTimeout(timer);
    // Give the bytes back and let TLS take the socket over, as if it had just connected.
    raw.pause();
    raw.unshift(first);
    entry.state = 'handshaking';
    for (const listener of guard.tlsListeners) listener.call(guard.server, raw);
  });
}

function established(guard: Guard, socket: TLSSocket): void {
  const raw = rawOf(socket);
  const entry = raw ? guard.tracked.get(raw) : undefined;
  if (!entry) return;
  entry.state = 'established';
  entry.tls = socket;
  entry.since = guard.now();
}

function handshakeFailed(guard: Guard, err: Error & { code?: string }, socket: TLSSocket): void {
  socket.destroy();
  const raw = rawOf(socket);
  if (raw && guard.evicted.has(raw)) return; // counted as evicted already
  const timeout = err.code === 'ERR_TLS_HANDSHAKE_TIMEOUT';
  guard.metrics.refused.inc({ reason: timeout ? 'handshake-timeout' : 'tls-error' });
  if (timeout)
    guard.warn(
      'handshake-timeout',
      { timeoutMs: guard.limits.handshakeTimeoutMs },
      'TLS handshake did not finish in time',
    );
}

/** A request on a tracked connection: busy until its answer is done, then idle from that moment. */
function answering(
  guard: Guard,
  socket: TLSSocket,
  response: { once(e: 'close', f: () => void): void },
): void {
  const raw = rawOf(socket);
  const entry = raw ? guard.tracked.get(raw) : undefined;
  if (!entry) return;
  entry.busy++;
  response.once('close', () => {
    entry.busy--;
    entry.since = guard.now();
  });
}

/** File descriptors kept free for the health port, certificate reloads, logs and the cluster client. */
const RESERVED_DESCRIPTORS = 64;

/** The soft limit on open files, from /proc (Linux); undefined where it cannot be read. */
export function openFileLimit(read = () => readFileSync('/proc/self/limits', 'utf8')): number | undefined {
  try {
    const match = /^Max open files\s+(\d+|unlimited)/m.exec(read());
    if (!match || match[1] === 'unlimited') return undefined;
    return Number(match[1]);
  } catch {
    return undefined;
  }
}

/**
 * The connection cap, lowered when the process may not open that many files:
 * running out of descriptors would fail accept() silently and take /healthz
 * down with the webhook.
 */
export function connectionCap(wanted: number, logger: Logger, limit = openFileLimit()): number {
  if (limit === undefined || wanted + RESERVED_DESCRIPTORS <= limit) return wanted;
  const cap = Math.max(1, limit - RESERVED_DESCRIPTORS);
  logger.warn(
    { wanted, openFileLimit: limit, cap },
    '--max-connections is above what the open-file limit allows; lowered',
  );
  return cap;
}
