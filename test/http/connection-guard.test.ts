/**
 * The connection guard (src/http/connections.ts) in process, on a real HTTPS
 * listener with a clock of the test's: a new connection held as a plain socket
 * until its first bytes and then handed to TLS with those bytes, the deadline
 * for those bytes, Node's handshake timeout and TLS errors as refusals, room
 * made at the cap (which connection is closed, and never a busy one), and the
 * drain at shutdown. hostile.test.ts and the reliability suites see the same
 * from a child process; these run inside the mutation subset.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { ServerResponse } from 'node:http';
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificates, type GeneratedCertificates } from '../../src/certs/generate.js';
import { connectionCap, DRAIN_IDLE_MS, guardConnections, openFileLimit } from '../../src/http/connections.js';
import { createLimitMetrics } from '../../src/http/limit-metrics.js';
import { eventually, sleep } from '../kit/eventually.js';

let certs: GeneratedCertificates;
beforeAll(async () => {
  certs = await generateCertificates({ service: 'guard', namespace: 'test' });
});

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

/** Polls every 5 ms for up to 5 s: these waits are for events a few milliseconds apart. */
const until = (cond: () => boolean, what: string) => eventually(cond, what, 5_000, 5);

const ticks = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** The first five bytes of a TLS handshake record: TLS starts, and waits for the rest. */
const PARTIAL_HELLO = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]);

interface Options {
  readonly max?: number;
  /** The guard's deadline for the first bytes. */
  readonly deadlineMs?: number;
  /** Node's own handshake timeout (server option). */
  readonly tlsHandshakeMs?: number;
}

/** A guarded HTTPS server: GET /hold keeps its answer until the test ends it; anything else is answered `ok`. */
async function guarded(options: Options = {}) {
  const held: ServerResponse[] = [];
  const server: Server = createServer(
    {
      cert: certs.cert,
      key: certs.key,
      keepAliveTimeout: 60_000,
      ...(options.tlsHandshakeMs ? { handshakeTimeout: options.tlsHandshakeMs } : {}),
    },
    (req, res) => {
      if (req.url === '/hold') held.push(res);
      else res.end('ok');
    },
  );
  // Node's TLS takes a connection over in this listener; the guard calls it only after the first bytes.
  const handedOver: Socket[] = [];
  server.prependListener('connection', (s: Socket) => handedOver.push(s));
  const registry = new Registry();
  const metrics = createLimitMetrics(registry);
  const warnings: [string, Record<string, unknown>, string][] = [];
  const clock = { t: 1_000_000, reads: 0 };
  const guard = guardConnections(
    server,
    { maxConnections: options.max ?? 10, handshakeTimeoutMs: options.deadlineMs ?? 60_000 },
    {
      metrics,
      warn: (key, fields, message) => warnings.push([key, fields, message]),
      now: () => (clock.reads++, clock.t),
    },
  );
  const established: TLSSocket[] = [];
  server.on('secureConnection', (s: TLSSocket) => established.push(s));
  const clients: Socket[] = [];
  cleanup.push(() => {
    for (const c of clients) c.destroy();
    server.closeAllConnections();
    server.close();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;

  const refused = async () =>
    Object.fromEntries(
      (await metrics.refused.get()).values
        .filter((v) => v.value > 0)
        .map((v) => [v.labels['reason'], v.value]),
    );
  const openGauge = async () => (await metrics.connectionsOpen.get()).values[0]?.value;

  /** A TCP connection that sends nothing (yet), once the guard holds it. */
  const raw = async (): Promise<Client> => {
    const before = guard.open();
    const socket = tcpConnect({ host: '127.0.0.1', port });
    clients.push(socket);
    const client = watch(socket);
    await once(socket, 'connect');
    await until(() => guard.open() > before || client.closed, 'the guard to hold the connection');
    return client;
  };

  /** A TLS connection (over `over` when given), once the server has finished its handshake too. */
  const secure = async (over?: Client): Promise<Client & { socket: TLSSocket }> => {
    const before = established.length;
    const socket = tlsConnect({
      ...(over ? { socket: over.socket } : { host: '127.0.0.1', port }),
      ca: certs.caCert,
      servername: 'localhost',
    });
    clients.push(socket);
    const client = watch(socket);
    await once(socket, 'secureConnect');
    await until(() => established.length > before, 'the server to finish the handshake');
    return client as Client & { socket: TLSSocket };
  };

  return {
    server,
    port,
    guard,
    clock,
    warnings,
    refused,
    openGauge,
    handedOver,
    held,
    established,
    raw,
    secure,
  };
}

interface Client {
  readonly socket: Socket;
  /** Everything received. */
  text: string;
  closed: boolean;
  ended: boolean;
}

function watch(socket: Socket): Client {
  const client: Client = { socket, text: '', closed: false, ended: false };
  socket.on('data', (c: Buffer) => (client.text += c.toString()));
  socket.on('end', () => (client.ended = true));
  socket.on('close', () => (client.closed = true));
  socket.on('error', () => {});
  return client;
}

/** Sends a keep-alive GET and waits for `path`'s answer (`ok`) unless told not to wait. */
async function get(client: Client, path = '/', wait = true): Promise<void> {
  const before = client.text.length;
  client.socket.write(`GET ${path} HTTP/1.1\r\nhost: localhost\r\n\r\n`);
  if (wait) await until(() => client.text.slice(before).endsWith('\r\n\r\nok'), `the answer to ${path}`);
}

describe('hand-over to TLS at the first bytes', () => {
  it('holds a connection that has sent nothing as a plain socket, counted open, with no TLS', async () => {
    const s = await guarded();
    await s.raw();
    await ticks();
    expect(s.guard.open()).toBe(1);
    expect(await s.openGauge()).toBe(1);
    expect(s.handedOver).toEqual([]);
  });

  it('hands it to TLS with its first bytes: the handshake completes and a request is answered', async () => {
    const s = await guarded();
    const plain = await s.raw();
    const client = await s.secure(plain);
    expect(s.handedOver).toHaveLength(1);
    expect(s.handedOver[0]!.remotePort).toBe(plain.socket.localPort);
    await get(client);
    expect(await s.refused()).toEqual({});
  });

  it('counts a connection gone when it closes, before or after the hand-over', async () => {
    const s = await guarded();
    const a = await s.raw();
    const b = await s.secure();
    expect([s.guard.open(), await s.openGauge()]).toEqual([2, 2]);
    a.socket.destroy();
    await until(() => s.guard.open() === 1, 'one connection left');
    expect(await s.openGauge()).toBe(1);
    b.socket.destroy();
    await until(() => s.guard.open() === 0, 'no connection left');
    expect(await s.openGauge()).toBe(0);
  });

  it('a reset before the first bytes is not an unhandled error', async () => {
    const s = await guarded();
    const a = await s.raw();
    a.socket.resetAndDestroy();
    await until(() => s.guard.open() === 0, 'the reset connection to be gone');
    // The server is still serving.
    await get(await s.secure());
  });
});

describe('deadline for the first bytes', () => {
  it('closes a connection that sends nothing in time, counts it and warns', async () => {
    const s = await guarded({ deadlineMs: 100 });
    const a = await s.raw();
    await until(() => a.closed, 'the silent connection to be closed');
    expect(a.text).toBe('');
    expect(await s.refused()).toEqual({ 'handshake-timeout': 1 });
    expect(s.warnings).toEqual([
      ['handshake-timeout', { timeoutMs: 100 }, 'TLS handshake did not start in time'],
    ]);
    await until(() => s.guard.open() === 0, 'the connection to be counted gone');
  });

  it('does not apply once the first bytes arrived: the connection outlives the deadline and is served', async () => {
    const s = await guarded({ deadlineMs: 100 });
    const client = await s.secure();
    await sleep(300);
    expect(client.closed).toBe(false);
    await get(client);
    expect([await s.refused(), s.warnings]).toEqual([{}, []]);
  });

  it('is cancelled when the connection closes first: no refusal counted', async () => {
    const s = await guarded({ deadlineMs: 100 });
    const a = await s.raw();
    a.socket.destroy();
    await until(() => s.guard.open() === 0, 'the connection to be counted gone');
    await sleep(250);
    expect([await s.refused(), s.warnings]).toEqual([{}, []]);
  });
});

describe('TLS failures', () => {
  it("Node's handshake timeout is counted as handshake-timeout, with its own warning", async () => {
    const s = await guarded({ tlsHandshakeMs: 100 });
    const a = await s.raw();
    a.socket.write(PARTIAL_HELLO);
    await until(() => a.closed, 'the stalled handshake to be closed');
    await ticks();
    expect(await s.refused()).toEqual({ 'handshake-timeout': 1 });
    expect(s.warnings).toEqual([
      ['handshake-timeout', { timeoutMs: 60_000 }, 'TLS handshake did not finish in time'],
    ]);
  });

  it('bytes that are not TLS are a tls-error, without a warning, and the connection is closed', async () => {
    const s = await guarded();
    const a = await s.raw();
    a.socket.write('GET / HTTP/1.1\r\nhost: localhost\r\n\r\n');
    await until(() => a.closed, 'the connection to be closed');
    await ticks();
    expect(await s.refused()).toEqual({ 'tls-error': 1 });
    expect(s.warnings).toEqual([]);
  });

  it('a client leaving in the middle of its handshake is a tls-error', async () => {
    const s = await guarded();
    const a = await s.raw();
    a.socket.write(PARTIAL_HELLO);
    await until(() => s.handedOver.length === 1, 'the hand-over');
    a.socket.destroy();
    await until(() => s.guard.open() === 0, 'the connection to be counted gone');
    await ticks();
    expect(await s.refused()).toEqual({ 'tls-error': 1 });
  });
});

describe('room at the cap', () => {
  it('below the cap nothing is closed; at the cap the stalled handshake goes, and is counted once', async () => {
    const s = await guarded({ max: 2 });
    const stalled = await s.raw();
    stalled.socket.write(PARTIAL_HELLO);
    await until(() => s.handedOver.length === 1, 'the hand-over');
    s.clock.t += 1_000;
    const recent = await s.raw();
    expect([s.guard.open(), s.warnings, await s.refused()]).toEqual([2, [], {}]);
    s.clock.t += 1_500; // the first handshake is now 2.5 s old, the other 1.5 s
    const newcomer = await s.raw();
    await until(() => stalled.closed, 'the stalled handshake to be closed');
    await until(() => s.guard.open() === 2, 'two connections left');
    await ticks();
    expect([recent.closed, newcomer.closed]).toEqual([false, false]);
    // Closing it ends its TLS socket's handshake with an error: not counted a second time.
    expect(await s.refused()).toEqual({ 'evicted-handshake': 1 });
    expect(s.warnings).toEqual([['evicted', { open: 2, max: 2 }, 'connection limit reached']]);
  });

  it('closes the TLS connection idle the longest; the busy one and the newer idle one stay', async () => {
    const s = await guarded({ max: 3 });
    const busy = await s.secure();
    await get(busy, '/hold', false);
    await until(() => s.held.length === 1, 'the held request');
    const idlest = await s.secure();
    await get(idlest);
    s.clock.t += 1_000;
    const idle = await s.secure();
    await get(idle);
    s.clock.t += 500;
    const newcomer = await s.raw();
    await until(() => idlest.closed, 'the idlest connection to be closed');
    expect([busy.closed, idle.closed, newcomer.closed]).toEqual([false, false, false]);
    await ticks();
    expect(await s.refused()).toEqual({ 'evicted-idle': 1 });
    s.held[0]!.end('ok');
    await until(() => busy.text.endsWith('\r\n\r\nok'), 'the held answer');
  });

  it('refuses the newcomer when every connection is busy, and evicts the connection once its answer is done', async () => {
    const s = await guarded({ max: 1 });
    const busy = await s.secure();
    s.clock.t += 60_000; // however long ago it was accepted
    await get(busy, '/hold', false);
    await until(() => s.held.length === 1, 'the held request');
    const refusedOne = await s.raw();
    await until(() => refusedOne.closed, 'the newcomer to be refused');
    expect(busy.closed).toBe(false);
    expect(await s.refused()).toEqual({ 'connection-limit': 1 });
    expect(s.warnings).toEqual([
      [
        'refused',
        { open: 1, max: 1 },
        'connection limit reached with every connection busy; refusing a new one',
      ],
    ]);
    expect(s.guard.open()).toBe(1);
    s.held[0]!.end('ok');
    await until(() => busy.text.endsWith('\r\n\r\nok'), 'the held answer');
    await ticks();
    const next = await s.raw();
    await until(() => busy.closed, 'the now idle connection to be evicted');
    expect(next.closed).toBe(false);
    expect(await s.refused()).toEqual({ 'connection-limit': 1, 'evicted-idle': 1 });
  });

  it('counts an established connection idle from its handshake, not from its accept', async () => {
    const s = await guarded({ max: 2 });
    // Accepted at t0, silent for 20 s, then its handshake: idle for 1 s at the newcomer's arrival.
    const early = await s.raw();
    s.clock.t += 20_000;
    await s.secure(early);
    const waiting = await s.raw();
    s.clock.t += 1_000;
    const newcomer = await s.raw();
    // Neither is long idle nor stalled: the handshake (of any age) goes before an idle connection.
    await until(() => waiting.closed, 'the waiting connection to be closed');
    expect([early.closed, newcomer.closed]).toEqual([false, false]);
    expect(await s.refused()).toEqual({ 'evicted-handshake': 1 });
  });

  it('counts a connection idle from the end of its last answer, not from its handshake', async () => {
    const s = await guarded({ max: 2 });
    const client = await s.secure();
    await get(client, '/hold', false);
    await until(() => s.held.length === 1, 'the held request');
    s.clock.t += 20_000;
    s.held[0]!.end('ok');
    await until(() => client.text.endsWith('\r\n\r\nok'), 'the held answer');
    await ticks();
    const waiting = await s.raw();
    s.clock.t += 1_000;
    const newcomer = await s.raw();
    await until(() => waiting.closed, 'the waiting connection to be closed');
    expect([client.closed, newcomer.closed]).toEqual([false, false]);
    expect(await s.refused()).toEqual({ 'evicted-handshake': 1 });
  });
});

describe('drain at shutdown', () => {
  it('closes what is idle long enough: a silent socket destroyed, an idle TLS connection ended; leaves the rest', async () => {
    const s = await guarded();
    const silent = await s.raw();
    const handshaking = await s.raw();
    handshaking.socket.write(PARTIAL_HELLO);
    await until(() => s.handedOver.length === 1, 'the hand-over');
    const idle = await s.secure();
    await get(idle);
    const busy = await s.secure();
    await get(busy, '/hold', false);
    await until(() => s.held.length === 1, 'the held request');
    s.clock.t += DRAIN_IDLE_MS - 1;
    const recent = await s.secure();
    await get(recent);
    s.clock.t += 1; // the idle one exactly DRAIN_IDLE_MS ago, the recent one just now
    s.server.close();
    await until(() => silent.closed && idle.closed, 'the idle connections to be closed');
    // The TLS connection got a close_notify and a FIN (an end), the silent one nothing to read.
    expect([idle.ended, silent.text]).toEqual([true, '']);
    await sleep(250);
    expect([handshaking.closed, busy.closed, recent.closed]).toEqual([false, false, false]);
    // Once the busy one's answer is out and it has been idle long enough, it goes too.
    s.held[0]!.end('ok');
    await until(() => busy.text.endsWith('\r\n\r\nok'), 'the held answer');
    await sleep(250);
    expect(busy.closed).toBe(false);
    s.clock.t += DRAIN_IDLE_MS;
    await until(() => busy.closed && recent.closed, 'the rest to be closed');
    expect(handshaking.closed).toBe(false);
  });

  it('drains with one timer, however often asked, and stops looking once the listener has closed', async () => {
    const s = await guarded();
    const idle = await s.secure();
    await get(idle);
    s.clock.t += DRAIN_IDLE_MS;
    // Node's server.close() asks once; a second request must not start a second drain.
    (s.server as unknown as { closeIdleConnections(): void }).closeIdleConnections();
    s.server.close();
    await once(s.server, 'close');
    const reads = s.clock.reads;
    await sleep(350);
    expect(s.clock.reads).toBe(reads);
  });

  it('destroys an ended connection DRAIN_IDLE_MS later when its client does not close its side', async () => {
    const s = await guarded();
    const plain = tcpConnect({ host: '127.0.0.1', port: s.port, allowHalfOpen: true });
    await once(plain, 'connect');
    const socket = tlsConnect({ socket: plain, ca: certs.caCert, servername: 'localhost' });
    const client = watch(socket);
    cleanup.push(() => socket.destroy());
    await once(socket, 'secureConnect');
    await get(client);
    const serverSide = s.established[0]!;
    let serverClosedAt = 0;
    serverSide.once('close', () => (serverClosedAt = performance.now()));
    // The client's TLS layer would answer the server's FIN with its own: keep its side open instead.
    socket.removeAllListeners('end');
    plain.end = (() => plain) as typeof plain.end;
    s.clock.t += DRAIN_IDLE_MS;
    const at = performance.now();
    s.server.close();
    await until(() => serverClosedAt > 0, 'the server to destroy its side');
    expect(serverClosedAt - at).toBeGreaterThanOrEqual(DRAIN_IDLE_MS - 100);
  });
});

describe('the cap and the open-file limit', () => {
  const limits = (line: string) => () =>
    `Limit                     Soft Limit           Hard Limit           Units     \n` +
    `Max processes             127431               127431               processes \n` +
    `${line}\n` +
    `Max locked memory         8388608              8388608              bytes     \n`;

  it('reads the soft limit on open files from /proc/self/limits', () => {
    expect(
      openFileLimit(limits('Max open files            1024                 1048576              files     ')),
    ).toBe(1024);
    expect(
      openFileLimit(limits('Max open files            unlimited            unlimited            files     ')),
    ).toBe(undefined);
    expect(openFileLimit(() => 'Max processes 5\n')).toBeUndefined();
    expect(
      openFileLimit(() => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
    // Only at the start of a line.
    expect(openFileLimit(() => 'x Max open files 99\n')).toBeUndefined();
    // On this machine (Linux) it is a number.
    expect(openFileLimit()).toBeGreaterThan(0);
  });

  it('lowers the cap to the limit less 64 descriptors, at least 1, and says so', () => {
    const lines: [Record<string, unknown>, string][] = [];
    const logger = {
      warn: (f: Record<string, unknown>, m: string) => lines.push([f, m]),
    } as unknown as Logger;
    expect(connectionCap(1_000, logger, undefined)).toBe(1_000);
    expect(connectionCap(1_000, logger, 1_064)).toBe(1_000);
    expect(lines).toEqual([]);
    expect(connectionCap(1_000, logger, 1_063)).toBe(999);
    expect(connectionCap(1_000, logger, 10)).toBe(1);
    expect(lines).toEqual([
      [
        { wanted: 1_000, openFileLimit: 1_063, cap: 999 },
        '--max-connections is above what the open-file limit allows; lowered',
      ],
      [
        { wanted: 1_000, openFileLimit: 10, cap: 1 },
        '--max-connections is above what the open-file limit allows; lowered',
      ],
    ]);
  });
});
