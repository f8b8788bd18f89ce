/**
 * One autocannon run against a server (32 HTTPS keep-alive connections by
 * default), every answer compared with the one the server gave first.
 */
import autocannon, { type Result } from 'autocannon';
import type { BenchPayload } from '../../test/kit/payloads.js';
import { keepAliveAgent, post } from '../../test/kit/webhook-client.js';
import { type Child } from '../../test/kit/server-process.js';

export async function loadFor(
  child: Child,
  p: BenchPayload,
  ca: string,
  run: { readonly seconds: number; readonly connections: number },
): Promise<Result> {
  const agent = keepAliveAgent(ca, 1);
  const expectBody = (await post({ agent, port: child.port, path: `${p.path}?timeout=10s`, body: p.body }))
    .body;
  agent.destroy();
  return autocannon({
    url: `https://127.0.0.1:${child.port}${p.path}?timeout=10s`,
    method: 'POST',
    body: p.body,
    headers: { 'content-type': 'application/json' },
    connections: run.connections,
    duration: run.seconds,
    timeout: 10,
    servername: 'localhost',
    tlsOptions: { ca },
    expectBody,
  });
}
