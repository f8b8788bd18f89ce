/**
 * The fake API server's faults do what they say: each one seen from a plain
 * HTTP client, per client and resource, switched on and off while running.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeApiServer, serviceCidr } from './fake-apiserver.js';

let fake: FakeApiServer | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One GET; `firstChunkOnly` resolves at the first body bytes (for watches). */
function get(
  url: string,
  path: string,
  opts: { timeoutMs?: number; headersOnly?: boolean } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { headers: { authorization: 'Bearer fake-token-for-tests' }, timeout: opts.timeoutMs ?? 2_000 },
      (res) => {
        if (opts.headersOnly) {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '' });
          req.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

const LIST = '/apis/networking.k8s.io/v1/servicecidrs';
const WATCH = `${LIST}?watch=true`;

describe('fault injection in the fake API server', () => {
  it('status faults: 429 with Retry-After, then served again once cleared; counted per verb', async () => {
    fake = await FakeApiServer.start();
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    const f = fake.faults.add(
      { resource: 'servicecidrs', verbs: ['list'] },
      { kind: 'status', code: 429, retryAfterSeconds: 7 },
    );
    const throttled = await get(fake.url, LIST);
    expect(throttled.status).toBe(429);
    expect(throttled.headers['retry-after']).toBe('7');
    expect(JSON.parse(throttled.body)).toMatchObject({
      kind: 'Status',
      code: 429,
      reason: 'TooManyRequests',
    });
    // Other resources are not affected.
    expect((await get(fake.url, '/apis/networking.k8s.io/v1/ipaddresses')).status).toBe(200);
    f.clear();
    expect((await get(fake.url, LIST)).status).toBe(200);
    expect(f.hits()).toBe(1);
    expect(fake.count({ resource: 'servicecidrs', verb: 'list' })).toBe(2);
    expect(fake.count({ resource: 'ipaddresses' })).toBe(1);
  });

  it('count-limited faults: the next n requests fail, then the real answer', async () => {
    fake = await FakeApiServer.start();
    fake.faults.add({ resource: 'servicecidrs' }, { kind: 'status', code: 503 }, { count: 2 });
    expect((await get(fake.url, LIST)).status).toBe(503);
    expect((await get(fake.url, LIST)).status).toBe(503);
    expect((await get(fake.url, LIST)).status).toBe(200);
  });

  it('garbage, truncated and oversized answers are 200s with bodies that are wrong', async () => {
    fake = await FakeApiServer.start();
    const g = fake.faults.add({ resource: 'servicecidrs' }, { kind: 'garbage' });
    const garbage = await get(fake.url, LIST);
    expect(garbage.status).toBe(200);
    expect(() => JSON.parse(garbage.body) as unknown).toThrow();
    g.clear();
    const t = fake.faults.add({ resource: 'servicecidrs' }, { kind: 'truncated' });
    const truncated = await get(fake.url, LIST);
    expect(truncated.status).toBe(200);
    expect(truncated.body.startsWith('{"apiVersion"')).toBe(true);
    expect(() => JSON.parse(truncated.body) as unknown).toThrow();
    t.clear();
    fake.faults.add({ resource: 'servicecidrs' }, { kind: 'oversized', bytes: 3_000_000 });
    const big = await get(fake.url, LIST);
    expect(big.body.length).toBeGreaterThan(3_000_000);
    expect(JSON.parse(big.body)).toMatchObject({ kind: 'List', items: [] });
  });

  it('hang and delay: no answer at all, or the real answer late', async () => {
    fake = await FakeApiServer.start();
    const h = fake.faults.add({ resource: 'servicecidrs' }, { kind: 'hang' });
    await expect(get(fake.url, LIST, { timeoutMs: 300 })).rejects.toThrow('timeout');
    h.clear();
    fake.faults.add({ resource: 'servicecidrs' }, { kind: 'delay', ms: 400 }, { count: 1 });
    const started = performance.now();
    expect((await get(fake.url, LIST)).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
  });

  it('a silent watch answers 200 and then sends nothing, even when objects change', async () => {
    fake = await FakeApiServer.start();
    fake.faults.add({ resource: 'servicecidrs', verbs: ['watch'] }, { kind: 'silent' });
    const chunks: string[] = [];
    const req = request(`${fake.url}${WATCH}`, { headers: { authorization: 'Bearer fake-token-for-tests' } });
    const status = await new Promise<number>((resolve) => {
      req.on('response', (res) => {
        res.on('data', (c: Buffer) => chunks.push(c.toString()));
        resolve(res.statusCode ?? 0);
      });
      req.end();
    });
    expect(status).toBe(200);
    fake.put('servicecidrs', serviceCidr('kubernetes', ['10.96.0.0/12']));
    await new Promise((r) => setTimeout(r, 200));
    expect(chunks).toEqual([]);
    expect(fake.faults.heldCount()).toBe(1);
    req.destroy();
  });

  it('refuse closes the port (ECONNREFUSED) of one client only; accept opens it again', async () => {
    fake = await FakeApiServer.start();
    const other = await fake.client('replica-b');
    await fake.refuse('default');
    await expect(get(fake.url, LIST)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect((await get(other.url, LIST)).status).toBe(200);
    await fake.accept('default');
    expect((await get(fake.url, LIST)).status).toBe(200);
    expect(fake.count({ client: 'replica-b' })).toBe(1);
    expect(fake.count({ client: 'default' })).toBe(1);
  });

  it('dropConnections cuts open watches of every client at once', async () => {
    fake = await FakeApiServer.start();
    const other = await fake.client('b');
    const ended = (url: string) =>
      new Promise<string>((resolve) => {
        const req = request(`${url}${WATCH}`, { headers: { authorization: 'Bearer fake-token-for-tests' } });
        req.on('response', (res) => {
          res.on('error', () => resolve('error'));
          res.on('close', () => resolve('closed'));
          res.resume();
        });
        req.on('error', () => resolve('error'));
        req.end();
      });
    const a = ended(fake.url);
    const b = ended(other.url);
    await fake.until(() => fake!.watcherCount('servicecidrs') === 2, 'two watches');
    fake.dropConnections();
    expect(await Promise.all([a, b])).toHaveLength(2);
    await fake.until(() => fake!.watcherCount('servicecidrs') === 0, 'no watches');
  });
});
