/**
 * The caps as the server assembles them (src/http/caps.ts): the body budget
 * sized by --max-inflight-body-bytes with the default small lane, its warnings
 * and its refusals counted, and the connection guard with the open-file cap
 * and controller-runtime's 32 s handshake deadline, all on one registry.
 */
import { once } from 'node:events';
import { createServer } from 'node:https';
import { connect, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCaps } from '../../src/http/caps.js';
import { HANDSHAKE_TIMEOUT_MS } from '../../src/http/connections.js';
import { createLimitMetrics } from '../../src/http/limit-metrics.js';

function recorder() {
  const lines: [Record<string, unknown>, string][] = [];
  const logger = {
    warn: (fields: Record<string, unknown>, message: string) => lines.push([fields, message]),
  };
  return { logger: logger as unknown as Logger, lines };
}

async function refused(registry: Registry): Promise<Record<string, number>> {
  const metric = registry.getSingleMetric('routability_webhook_refused_total')!;
  return Object.fromEntries(
    (await metric.get()).values.filter((v) => v.value > 0).map((v) => [v.labels['reason'], v.value]),
  );
}

const KiB = 1024;

afterEach(() => {
  vi.useRealTimers();
});

describe('the body budget of the caps', () => {
  it('holds --max-inflight-body-bytes, with 64 KiB bodies allowed 8 MiB above it', () => {
    const { logger } = recorder();
    const { bodyBudget } = createCaps(
      { maxConnections: 10, maxInflightBodyBytes: 1_000 },
      new Registry(),
      logger,
    );
    bodyBudget.tryAcquire(900);
    // Over 64 KiB a body has the budget only: 900 are in flight of 1,000.
    expect(bodyBudget.tryAcquire(64 * KiB + 1)).toBeUndefined();
    expect(bodyBudget.tryAcquire(64 * KiB)).toBeTypeOf('function');
    // The lane ends 8 MiB above the budget: small bodies fit up to 1,000 + 8 MiB exactly.
    for (let i = 0; i < 127; i++) expect(bodyBudget.tryAcquire(64 * KiB)).toBeTypeOf('function');
    expect(bodyBudget.inFlight()).toBe(1_000 + 8 * KiB * KiB - 100);
    expect(bodyBudget.tryAcquire(101)).toBeUndefined();
    expect(bodyBudget.tryAcquire(100)).toBeTypeOf('function');
  });

  it('warns while requests wait, not when they go at once; counts and warns a refusal at the timeout', () => {
    vi.useFakeTimers();
    const { logger, lines } = recorder();
    const registry = new Registry();
    const { bodyBudget } = createCaps(
      { maxConnections: 10, maxInflightBodyBytes: 100_000 },
      registry,
      logger,
    );
    const release = bodyBudget.tryAcquire(90_000)!;
    release();
    expect(lines).toEqual([]);
    bodyBudget.tryAcquire(90_000);
    const grants: unknown[] = [];
    bodyBudget.acquire(70_000, 500, (r) => grants.push(r));
    expect(lines).toEqual([[{ inFlight: 90_000, waiting: 1 }, 'request-body budget full; requests wait']]);
    vi.advanceTimersByTime(500);
    expect(grants).toEqual([undefined]);
    // Its own key: not held back by the waiting warning of a moment before.
    expect(lines[1]).toEqual([{}, 'request refused with 429: no room in the request-body budget in time']);
    expect(lines).toHaveLength(2);
    return refused(registry).then((r) => expect(r).toEqual({ 'body-budget': 1 }));
  });
});

describe('the connection guard of the caps', () => {
  async function server(maxConnections: number) {
    const registry = new Registry();
    const { logger, lines } = recorder();
    const s = createServer({});
    createCaps({ maxConnections, maxInflightBodyBytes: 1_000 }, registry, logger).guard(s);
    s.listen(0, '127.0.0.1');
    await once(s, 'listening');
    const port = (s.address() as { port: number }).port;
    const clients: Socket[] = [];
    const open = async () => {
      const c = connect({ host: '127.0.0.1', port });
      c.on('error', () => {});
      clients.push(c);
      await once(c, 'connect');
      return c;
    };
    const stop = () => {
      for (const c of clients) c.destroy();
      s.close();
    };
    return { registry, lines, open, stop, server: s };
  }

  const poll = async (cond: () => boolean) => {
    for (let i = 0; i < 2_000 && !cond(); i++) await new Promise((r) => setImmediate(r));
    return cond();
  };

  it('caps the connections at --max-connections: the oldest waiting one makes room', async () => {
    const s = await server(1);
    try {
      const first = await s.open();
      let closed = false;
      first.on('close', () => (closed = true));
      await s.open();
      expect(await poll(() => closed)).toBe(true);
      expect(await refused(s.registry)).toEqual({ 'evicted-handshake': 1 });
      expect(s.lines).toEqual([[{ open: 1, max: 1 }, 'connection limit reached']]);
    } finally {
      s.stop();
    }
  });

  it("closes a connection that sends nothing for controller-runtime's 32 s", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const s = await server(10);
    try {
      const silent = await s.open();
      let closed = false;
      silent.on('close', () => (closed = true));
      // Accepted by the server (its timer armed) before the clock moves.
      expect(await poll(() => vi.getTimerCount() > 0)).toBe(true);
      vi.advanceTimersByTime(HANDSHAKE_TIMEOUT_MS - 1);
      expect(await poll(() => closed)).toBe(false);
      vi.advanceTimersByTime(1);
      expect(await poll(() => closed)).toBe(true);
      expect(HANDSHAKE_TIMEOUT_MS).toBe(32_000);
      expect(await refused(s.registry)).toEqual({ 'handshake-timeout': 1 });
    } finally {
      s.stop();
    }
  });
});

describe('the metrics of the caps', () => {
  it('are registered by name, with every refusal reason at zero before the first', async () => {
    const registry = new Registry();
    createLimitMetrics(registry);
    const json = await registry.getMetricsAsJSON();
    expect(json.map((m) => [m.name, m.type, m.help])).toEqual([
      [
        'routability_webhook_connections_open',
        'gauge',
        'TCP connections open on the webhook port, in any state.',
      ],
      [
        'routability_webhook_refused_total',
        'counter',
        'Connections closed or requests refused by a cap: connection-limit, evicted-idle, evicted-handshake, ' +
          'handshake-timeout, tls-error, body-budget.',
      ],
      [
        'routability_webhook_request_body_bytes_in_flight',
        'gauge',
        'Bytes of request bodies being received or parsed now (reserved at their Content-Length).',
      ],
      [
        'routability_webhook_request_bodies_waiting',
        'gauge',
        'Requests waiting for room in the body budget before their body is read.',
      ],
    ]);
    const refusedSeries = json[1]!.values.map((v) => [v.labels['reason'], v.value]);
    expect(refusedSeries).toEqual([
      ['connection-limit', 0],
      ['evicted-idle', 0],
      ['evicted-handshake', 0],
      ['handshake-timeout', 0],
      ['tls-error', 0],
      ['body-budget', 0],
    ]);
  });

  it('the body gauges read their source when scraped, and stay at zero without one', async () => {
    const registry = new Registry();
    const body: { source?: { inFlight: () => number; waiting: () => number } } = {};
    const metrics = createLimitMetrics(registry, () => body.source);
    const read = async () => [
      (await metrics.bodyBytesInFlight.get()).values[0]?.value,
      (await metrics.bodiesWaiting.get()).values[0]?.value,
    ];
    expect(await read()).toEqual([0, 0]);
    body.source = { inFlight: () => 1234, waiting: () => 5 };
    expect(await read()).toEqual([1234, 5]);
    // Without a source argument at all.
    const alone = createLimitMetrics(new Registry());
    expect((await alone.bodyBytesInFlight.get()).values[0]?.value).toBe(0);
    expect((await alone.bodiesWaiting.get()).values[0]?.value).toBe(0);
  });
});
