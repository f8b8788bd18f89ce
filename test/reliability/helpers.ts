/** Shared set-up for the reliability tests: certificates, a served webhook child process, a client. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Agent } from 'node:https';
import { keepAliveAgent, post, reviewProblem } from '../kit/webhook-client.js';
import { makeCerts, spawnWebhook, type Child } from '../kit/server-process.js';
import { tempDir, type CertPaths } from '../kit/key-files.js';
import { createSmallReview, uidFor, PAYLOAD_PATHS } from '../kit/payloads.js';

export interface Served {
  readonly dir: string;
  readonly certs: CertPaths;
  readonly ca: string;
  readonly server: Child;
  readonly agent: Agent;
  close(): Promise<void>;
}

export async function serve(
  extraArgs: readonly string[] = [],
  prefix = 'reliability-',
  nodeArgs: readonly string[] = [],
): Promise<Served> {
  const tmp = await tempDir(prefix);
  const certs = await makeCerts(join(tmp.path, 'certs'));
  const ca = await readFile(certs.ca, 'utf8');
  let server: Child | undefined;
  try {
    server = await spawnWebhook({ certs, logFile: join(tmp.path, 'server.log'), extraArgs, nodeArgs });
  } catch (err) {
    await tmp.remove();
    throw err;
  }
  const agent = keepAliveAgent(ca, 8);
  const child = server;
  return {
    dir: tmp.path,
    certs,
    ca,
    server: child,
    agent,
    close: async () => {
      agent.destroy();
      await child.stop(5_000);
      await tmp.remove();
    },
  };
}

let probes = 0;

/** A good review answers correctly: the server is still serving. Returns a problem or undefined. */
export async function goodReviewProblem(agent: Agent, port: number): Promise<string | undefined> {
  const uid = uidFor(0x7000_0000 + probes++);
  try {
    const reply = await post({
      agent,
      port,
      path: `${PAYLOAD_PATHS['create-small']}?timeout=10s`,
      body: JSON.stringify(createSmallReview(uid)),
      timeoutMs: 5_000,
    });
    if (reply.status !== 200) return `good review got HTTP ${reply.status}: ${reply.body.slice(0, 200)}`;
    const problem = reviewProblem(reply.body, uid);
    if (problem) return problem;
    if (!(JSON.parse(reply.body) as { response: { allowed: boolean } }).response.allowed)
      return 'good review denied';
    return undefined;
  } catch (err) {
    return `good review failed: ${(err as Error).message}`;
  }
}
