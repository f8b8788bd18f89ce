/**
 * `npm run bench -- count-layers`: instructions per review of each of the
 * webhook's own layers, one at a time, counted by valgrind's callgrind as
 * `npm run bench -- count` counts whole reviews. In one process (`node --single-threaded`)
 * each layer of a build's dist/ runs --calls times on each payload, after a
 * warm-up of --warmup calls of every layer on every payload (so that the
 * layer's code is optimised before it is counted), between marks at which
 * callgrind writes its counters (`--dump-before=uv_os_getpriority`). The
 * layers, in the order a review meets them:
 *
 * - `depth scan`: nestsDeeperThan on the body's bytes (src/http/json-depth.ts);
 * - `utf8 decode`: the bytes to a string (`Buffer#toString`);
 * - `JSON.parse`: the string to objects (what every server pays);
 * - `envelope decode`: the ajv check of the AdmissionReview envelope;
 * - `rules`: the webhook's rules for the review (validateReview / mutateReview);
 * - `encode`: the Outcome to the AdmissionReview answer (encodeReview);
 * - `answer JSON.stringify`: the answer as the string sent;
 * - `answer string (both)`: the Outcome to the string sent as the server does it: encodeReviewJson
 *   in one step where the build has it, else encodeReview then JSON.stringify (to compare builds);
 * - `review record`: the counter, the duration histogram, the findings counter
 *   and the log line (pino, synchronous writes to /dev/null).
 *
 * What is not here (Fastify's routing, hooks and reply, the body reader's
 * events, the in-flight gauge) is the whole review through `inject()` minus
 * these layers: `npm run bench -- count` gives the whole.
 *
 * Flags: --root DIR (a build: DIR holds dist/ and node_modules/; default this
 * repository), --payloads a,b, --calls N (300), --warmup N (2,000),
 * --log-level L (info). Writes bench/results/count-layers.json.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import type * as DecodeModule from '../src/admission/decode.js';
import type * as EncodeModule from '../src/admission/encode.js';
import type * as DepthModule from '../src/http/json-depth.js';
import type * as RecordModule from '../src/http/review-record.js';
import type * as WebhooksModule from '../src/webhooks/gateway.js';
import { callgrindNodeArgs, dumpTotal } from './lib/callgrind.js';
import { repoRoot } from '../test/kit/server-process.js';
import { tempDir } from '../test/kit/key-files.js';
import { writeBenchResult } from './lib/results.js';
import { webhookParts } from './lib/webhook-app.js';
import { benchPayloads } from '../test/kit/payloads.js';

const { values: flags } = parseArgs({
  options: {
    driver: { type: 'boolean', default: false },
    root: { type: 'string' },
    payloads: { type: 'string' },
    calls: { type: 'string', default: '300' },
    warmup: { type: 'string', default: '2000' },
    'log-level': { type: 'string', default: 'info' },
  },
});
const CALLS = Number(flags.calls);
const ROOT = flags.root ?? repoRoot();

const LAYERS = [
  'depth scan',
  'utf8 decode',
  'JSON.parse',
  'envelope decode',
  'rules',
  'encode',
  'answer JSON.stringify',
  'answer string (both)',
  'review record',
] as const;
type Layer = (typeof LAYERS)[number];

function selectedPayloads() {
  const selected = flags.payloads?.split(',');
  return benchPayloads().filter((p) => !selected || selected.includes(p.name));
}

/** One call of each layer on a payload, built from a build's dist/. */
export async function layersOf(
  root: string,
): Promise<(body: string, path: string) => Record<Layer, () => void>> {
  const { load, logger, inputs, metrics } = await webhookParts(root, flags['log-level']!);
  const { nestsDeeperThan, MAX_JSON_DEPTH } = await load<typeof DepthModule>('http/json-depth.js');
  const { createReviewDecoder } = await load<typeof DecodeModule>('admission/decode.js');
  const encoder = await load<Partial<typeof EncodeModule> & Pick<typeof EncodeModule, 'encodeReview'>>(
    'admission/encode.js',
  );
  const { encodeReview } = encoder;
  // Builds before encodeReviewJson serialised the answer object.
  const answerString =
    encoder.encodeReviewJson ??
    ((...args: Parameters<typeof encodeReview>) => JSON.stringify(encodeReview(...args)));
  const { WEBHOOKS } = await load<typeof WebhooksModule>('webhooks/gateway.js');
  const { createReviewRecorders } = await load<typeof RecordModule>('http/review-record.js');
  const now = inputs.current();
  if (!now) throw new Error('no rule context');
  const recorders = createReviewRecorders(logger, metrics);
  const decode = createReviewDecoder();
  return (body, path) => {
    const name = path === '/validate' ? 'validate' : 'mutate';
    const webhook = WEBHOOKS[name];
    const record = recorders(name);
    const bytes = Buffer.from(body);
    const text = bytes.toString('utf8');
    const parsedBody: unknown = JSON.parse(text);
    const decoded = decode(parsedBody);
    if (!decoded.ok) throw new Error(decoded.error);
    const outcome = webhook(decoded.request, now.ctx);
    const review = encodeReview(decoded.version, decoded.request.uid, outcome);
    // Results are kept in a sink so that no call can be optimised away.
    const sink: unknown[] = [undefined];
    return {
      'depth scan': () => void (sink[0] = nestsDeeperThan(bytes, MAX_JSON_DEPTH)),
      'utf8 decode': () => void (sink[0] = bytes.toString('utf8')),
      'JSON.parse': () => void (sink[0] = JSON.parse(text)),
      // The decoder reads a parsed body: the same one each call (it does not change it).
      'envelope decode': () => void (sink[0] = decode(parsedBody)),
      rules: () => void (sink[0] = webhook(decoded.request, now.ctx)),
      encode: () => void (sink[0] = encodeReview(decoded.version, decoded.request.uid, outcome)),
      'answer JSON.stringify': () => void (sink[0] = JSON.stringify(review)),
      'answer string (both)': () =>
        void (sink[0] = answerString(decoded.version, decoded.request.uid, outcome)),
      'review record': () =>
        record.answered(decoded.request, outcome, { seconds: 0.000_2, budgetMs: 10_000 }, now.revision),
    };
  };
}

/** Runs under callgrind: warm-up, then each payload's layers between marks. */
async function driver(): Promise<void> {
  const build = await layersOf(ROOT);
  const payloads = selectedPayloads().map((p) => ({ name: p.name, layers: build(p.body, p.path) }));
  const gc = (globalThis as { gc?: (o: { type: string; execution: string }) => void }).gc;
  const mark = () => {
    gc?.({ type: 'minor', execution: 'sync' });
    getPriority();
  };
  for (let i = 0; i < Number(flags.warmup); i++)
    for (const p of payloads) for (const layer of LAYERS) p.layers[layer]();
  mark();
  for (const p of payloads)
    for (const layer of LAYERS) {
      const call = p.layers[layer];
      for (let i = 0; i < CALLS; i++) call();
      mark();
    }
}

async function main(): Promise<void> {
  const payloads = selectedPayloads();
  const tmp = await tempDir('bench-count-layers-');
  const out = join(tmp.path, 'layers.out');
  try {
    console.log(
      `load ${readFileSync('/proc/loadavg', 'utf8').trim()}; ${CALLS} calls of each layer per payload after ${flags.warmup} of each`,
    );
    await promisify(execFile)(
      'valgrind',
      callgrindNodeArgs(out, fileURLToPath(import.meta.url), [
        '--driver',
        '--root',
        ROOT,
        '--calls',
        String(CALLS),
        '--warmup',
        flags.warmup!,
        '--log-level',
        flags['log-level']!,
        ...(flags.payloads ? ['--payloads', flags.payloads] : []),
      ]),
      { maxBuffer: 64 * 1024 * 1024 },
    );
    // Dump 1 is start-up and warm-up; then one dump per payload and layer, in order.
    const perCall: Record<string, Record<string, number>> = {};
    let dump = 2;
    for (const p of payloads) {
      perCall[p.name] = {};
      for (const layer of LAYERS) {
        perCall[p.name]![layer] = Math.round(dumpTotal(out, dump++, 'layers') / CALLS);
      }
    }
    console.log('\ninstructions per call (thousands):');
    console.log(`| layer | ${payloads.map((p) => p.name).join(' | ')} |`);
    console.log(`|---|${payloads.map(() => '---:').join('|')}|`);
    for (const layer of LAYERS)
      console.log(
        `| ${layer} | ${payloads.map((p) => (perCall[p.name]![layer]! / 1000).toFixed(1)).join(' | ')} |`,
      );
    writeBenchResult('count-layers.json', { root: ROOT, calls: CALLS, perCall });
  } finally {
    await tmp.remove();
  }
}

if (!process.env['COUNT_LAYERS_IMPORT'])
  (flags.driver ? driver() : main()).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
