/**
 * One app answering reviews through `inject()` in this process, for
 * bench/count.ts to run under `valgrind --tool=callgrind
 * --dump-before=uv_os_getpriority`: a warm-up of every payload, then a fixed
 * number of reviews of each, one payload after the other. Every answer must be
 * HTTP 200. `os.getPriority()` marks the end of the warm-up and of each
 * payload's reviews: callgrind writes its counters at each mark, so each
 * payload's reviews get an instruction count of their own.
 *
 *   node count-driver.js --app webhook|project|defaults|node [--root DIR]
 *     [--warmup N] --counts create-small=N,update-large=N,status-mutate=N [--log-level L]
 */
import { getPriority } from 'node:os';
import { parseArgs } from 'node:util';
import inject from 'light-my-request';
import { bareFastifyApp, defaultsFastifyApp } from './lib/bare-fastify.js';
import { rawNodeHandler } from './lib/raw-node-handler.js';
import { repoRoot } from '../test/kit/server-process.js';
import { webhookApp } from './lib/webhook-app.js';
import { benchPayloads } from '../test/kit/payloads.js';

const { values: flags } = parseArgs({
  options: {
    app: { type: 'string', default: 'webhook' },
    root: { type: 'string' },
    warmup: { type: 'string', default: '500' },
    counts: { type: 'string', default: '' },
    'log-level': { type: 'string', default: 'info' },
  },
});

type Send = (path: string, body: string) => Promise<number>;

async function sender(app: string): Promise<Send> {
  const options = (path: string, body: string) => ({
    method: 'POST' as const,
    url: `${path}?timeout=10s`,
    headers: { 'content-type': 'application/json' },
    payload: body,
  });
  if (app === 'node') {
    return async (path, body) => (await inject(rawNodeHandler, options(path, body))).statusCode;
  }
  const fastify =
    app === 'webhook'
      ? await webhookApp(flags.root ?? repoRoot(), flags['log-level'])
      : app === 'project'
        ? bareFastifyApp()
        : app === 'defaults'
          ? defaultsFastifyApp()
          : undefined;
  if (!fastify) throw new Error(`--app ${app}: expected webhook, project, defaults or node`);
  await fastify.ready();
  return async (path, body) => (await fastify.inject(options(path, body))).statusCode;
}

/**
 * The end of a segment: a young-generation collection (with --expose-gc), so the garbage of a
 * segment's reviews is collected within it rather than in the next payload's; then
 * os.getPriority(), at which callgrind writes its counters (--dump-before=uv_os_getpriority).
 */
function mark(): void {
  (globalThis as { gc?: (o: { type: string; execution: string }) => void }).gc?.({
    type: 'minor',
    execution: 'sync',
  });
  getPriority();
}

async function main() {
  const send = await sender(flags.app);
  const payloads = benchPayloads();
  const counts = new Map(
    flags.counts
      .split(',')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), Number(kv.slice(kv.indexOf('=') + 1))] as const),
  );
  const once = async (p: (typeof payloads)[number]) => {
    const status = await send(p.path, p.body);
    if (status !== 200) throw new Error(`${flags.app} ${p.name}: HTTP ${status}`);
  };
  for (let i = 0; i < Number(flags.warmup); i++) for (const p of payloads) await once(p);
  mark();
  for (const p of payloads) {
    const n = counts.get(p.name) ?? 0;
    if (n === 0) continue;
    for (let i = 0; i < n; i++) await once(p);
    mark();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
