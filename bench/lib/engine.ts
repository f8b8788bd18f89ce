/**
 * Engine cost: the rules alone (the webhook functions of dist/webhooks/gateway.js,
 * which call validateGateway / mutateGateway) against JSON.parse of the same
 * bytes, and the whole decode → rules → encode → stringify path for context.
 * Runs in this process on the built code, one payload at a time.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Decode from '../../src/admission/decode.js';
import type * as Answer from '../../src/admission/answer.js';
import type * as Config from '../../src/config/rule-settings.js';
import type * as Networks from '../../src/rules/networks.js';
import type * as Gateway from '../../src/webhooks/gateway.js';
import type { BenchPayload } from '../../test/kit/payloads.js';
import { repoRoot, SERVICE_CIDRS } from '../../test/kit/server-process.js';
import { CONFIG } from './webhook-app.js';

export interface EngineFigure {
  readonly payload: string;
  readonly bytes: number;
  /** Nanoseconds per operation. */
  readonly parseNs: number;
  readonly rulesNs: number;
  readonly pipelineNs: number;
  /** rulesNs / parseNs */
  readonly ratio: number;
}

async function load<T>(relative: string): Promise<T> {
  return (await import(pathToFileURL(join(repoRoot(), 'dist', relative)).href)) as T;
}

/** Median of `samples` timings of `fn` run in batches of at least `batchMs`. */
function timeNs(fn: () => unknown, batchMs: number, samples: number): number {
  // Calibrate a batch size that takes about batchMs.
  let n = 1;
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (ms >= batchMs || n > 1e7) break;
    n *= ms < batchMs / 10 ? 10 : 2;
  }
  const per: number[] = [];
  for (let s = 0; s < samples; s++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    per.push(Number(process.hrtime.bigint() - t0) / n);
  }
  per.sort((a, b) => a - b);
  return per[Math.floor(per.length / 2)]!;
}

/** Median over `samples` batches of the time of `fn(setup())`, only `fn` timed. */
function timeEachNs<T>(setup: () => T, fn: (input: T) => unknown, batchMs: number, samples: number): number {
  const per: number[] = [];
  for (let w = 0; w < 2000; w++) fn(setup());
  for (let s = 0; s < samples; s++) {
    let spent = 0n;
    let n = 0;
    const end = performance.now() + batchMs;
    while (performance.now() < end) {
      const input = setup();
      const t0 = process.hrtime.bigint();
      fn(input);
      spent += process.hrtime.bigint() - t0;
      n++;
    }
    per.push(Number(spent) / n);
  }
  per.sort((a, b) => a - b);
  return per[Math.floor(per.length / 2)]!;
}

let sink: unknown;

export async function measureEngine(
  payloads: readonly BenchPayload[],
  batchMs = 100,
  samples = 15,
): Promise<EngineFigure[]> {
  const gateway = await load<typeof Gateway>('webhooks/gateway.js');
  const decodeMod = await load<typeof Decode>('admission/decode.js');
  const answerMod = await load<typeof Answer>('admission/answer.js');
  const config = await load<typeof Config>('config/rule-settings.js');
  const networks = await load<typeof Networks>('rules/networks.js');
  const parsed = networks.ServiceRanges.parse(SERVICE_CIDRS.split(','));
  if (!parsed.ok) throw new Error(parsed.error);
  const settings: Config.RuleSettings = CONFIG;
  const ctx = config.ruleContext(settings, parsed.ranges);
  const decode = decodeMod.createReviewDecoder();

  const out: EngineFigure[] = [];
  for (const p of payloads) {
    const webhook = p.path === '/mutate' ? gateway.mutateReview : gateway.validateReview;
    // The rules run on an object parsed just before (untimed), as in the server: one
    // object checked again and again would flatter them (hot inline caches), copies
    // checked in turn would punish them (cold caches).
    const bytes = Buffer.from(p.body);
    const parseNs = timeNs(() => (sink = JSON.parse(bytes.toString('utf8'))), batchMs, samples);
    const rulesNs = timeEachNs(
      () => {
        const decoded = decode(JSON.parse(bytes.toString('utf8')));
        if (!decoded.ok) throw new Error(`${p.name}: ${decoded.error}`);
        return decoded.request;
      },
      (request) => (sink = webhook(request, ctx)),
      batchMs,
      samples,
    );
    const pipelineNs = timeNs(
      () => {
        const a = answerMod.answerReview(decode, (r) => webhook(r, ctx), JSON.parse(bytes.toString('utf8')));
        sink = a.ok ? JSON.stringify(a.review) : a;
      },
      batchMs,
      samples,
    );
    out.push({
      payload: p.name,
      bytes: bytes.length,
      parseNs,
      rulesNs,
      pipelineNs,
      ratio: rulesNs / parseNs,
    });
  }
  if (sink === Symbol.for('never')) console.log(sink);
  return out;
}
