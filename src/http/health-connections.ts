/**
 * Bounds on the plain-HTTP health/metrics listener: a cap on open
 * connections and short header, request and keep-alive timeouts.
 *
 * Why: every idle TCP connection costs the process a socket and an HTTP
 * parser (about 7 KiB measured), and Node's defaults hold a connection that
 * never sends a byte for 60 to 90 s, so anyone who can reach the port could
 * hold tens of thousands and exhaust the replica's memory, taking the
 * admission webhook with it. Its clients are few and quick: the kubelet
 * opens a connection per probe and sends its request at once, a scraper
 * sends one every scrape interval and reconnects when a connection has gone.
 *
 * At the cap the guard makes room rather than refuse the newcomer: it closes
 * the oldest connection with no request in flight, so connections held open
 * cannot lock the kubelet's probes out (a probe's request arrives within
 * moments of its connection, and a connection answering a request is never
 * closed). Only when every connection is busy is the newcomer refused.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Counter, Gauge, Registry } from 'prom-client';
import { counter, gauge } from '../metric-registry.js';

/** Probes and a few scrapers at once, with room to spare; far below what would strain the heap. */
export const HEALTH_MAX_CONNECTIONS = 64;

/**
 * The listener's timeouts. A probe or scrape sends its headers at once and
 * is answered in milliseconds; kubelet probes time out after 1 s by default.
 */
export const HEALTH_TIMEOUTS = {
  /** Headers not complete this long after the connection (or the previous answer): closed. */
  headersTimeout: 5_000,
  /** A whole request not received this long after it started: closed. */
  requestTimeout: 10_000,
  /** An idle keep-alive connection is closed after this long (scrapers reconnect). */
  keepAliveTimeout: 5_000,
  /** How often Node checks the header and request timeouts (its default is 30 s). */
  connectionsCheckingInterval: 1_000,
} as const;

export interface HealthConnectionMetrics {
  readonly open: Gauge;
  readonly closed: Counter<'reason'>;
}

export function healthConnectionMetrics(registry: Registry): HealthConnectionMetrics {
  return {
    open: gauge(registry, {
      name: 'routability_webhook_health_connections_open',
      help: 'TCP connections open on the health/metrics port.',
    }),
    closed: counter(registry, {
      name: 'routability_webhook_health_connections_closed_total',
      help: 'Connections on the health/metrics port closed by its cap: reason evicted (idle, to make room) or refused (every connection busy).',
      labelNames: ['reason'] as const,
    }),
  };
}

interface Held {
  busy: number;
}

/** Takes over the listener's connections: call before it listens. Returns the number open (tests). */
export function guardHealthConnections(
  server: Server,
  maxConnections: number,
  metrics: HealthConnectionMetrics,
): { open: () => number } {
  // Insertion order is acceptance order: the first idle one found is the oldest.
  const held = new Map<Socket, Held>();
  const oldestIdle = (): Socket | undefined => {
    for (const [socket, h] of held) if (h.busy === 0) return socket;
    return undefined;
  };
  // Node's own listener (the HTTP parser) runs only for a connection kept.
  const nodeListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    // A reset before anything is read must not become an unhandled 'error'.
    socket.on('error', () => {});
    if (held.size >= maxConnections) {
      const victim = oldestIdle();
      if (!victim) {
        metrics.closed.inc({ reason: 'refused' });
        socket.destroy();
        return;
      }
      metrics.closed.inc({ reason: 'evicted' });
      held.delete(victim);
      victim.destroy();
    }
    held.set(socket, { busy: 0 });
    metrics.open.set(held.size);
    socket.once('close', () => {
      held.delete(socket);
      metrics.open.set(held.size);
    });
    for (const listener of nodeListeners) listener.call(server, socket);
  });
  server.on('request', (request: { socket: Socket }, response: { once(e: 'close', f: () => void): void }) => {
    const h = held.get(request.socket);
    if (!h) return;
    h.busy++;
    response.once('close', () => h.busy--);
  });
  return { open: () => held.size };
}
