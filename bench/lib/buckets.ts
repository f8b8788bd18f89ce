/**
 * Sorts the samples of a V8 CPU profile (`node --cpu-prof`) into the buckets
 * of a review's cost: TLS and HTTP, Fastify, the body reader, envelope
 * decoding, rules, encoding, the log line, metrics, timers, garbage
 * collection. A sample goes to the bucket of the innermost frame that is not
 * generic plumbing (buffers, events, streams, microtasks): a socket write
 * under pino is the log line's, the same write under Fastify's reply is
 * transport. Builtins such as JSON.parse have no frame of their own: their
 * time is their caller's.
 */

export const BUCKETS = [
  'TLS + HTTP (node:tls, node:http, node:net)',
  'Fastify lifecycle (routing, hooks, reply)',
  'body reader + JSON.parse',
  'envelope decoding (ajv)',
  'rules',
  'encoding + JSON.stringify',
  'admission handler',
  'log line (pino)',
  'metrics (prom-client)',
  'timers',
  'garbage collection',
  'native, unattributed ((program))',
  'other',
] as const;
export type Bucket = (typeof BUCKETS)[number];

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Frames that never decide a bucket: their time belongs to whoever called them. */
const TRANSPARENT = [
  /^node:buffer$/,
  /^node:events$/,
  /^node:internal\/(streams|util|validators|errors|process\/task_queues|async_hooks|buffer|fixed_queue)/,
  /^node:stream$/,
  /^node:fs$/,
  /^node:internal\/fs\//,
];

function classify(frame: CallFrame): Bucket | 'transparent' | 'idle' {
  const { url, functionName: name } = frame;
  if (url === '') {
    if (name === '(garbage collector)') return 'garbage collection';
    if (name === '(program)') return 'native, unattributed ((program))';
    if (name === '(idle)') return 'idle';
    if (name === '(root)') return 'other';
    // Functions ajv compiles with new Function have no script URL.
    if (/^validate\d*$/.test(name)) return 'envelope decoding (ajv)';
    return 'transparent';
  }
  if (TRANSPARENT.some((re) => re.test(url))) return 'transparent';
  if (
    /^node:(_tls|tls|_http|http|https|net|internal\/(tls|http|net|stream_base_commons|js_stream))/.test(url)
  )
    return 'TLS + HTTP (node:tls, node:http, node:net)';
  if (/^node:internal\/timers|^node:timers/.test(url)) return 'timers';
  if (/^node:internal\/perf|^node:perf_hooks/.test(url)) return 'metrics (prom-client)';
  if (
    /\/node_modules\/(pino|sonic-boom|fast-redact|pino-std-serializers|quick-format-unescaped|thread-stream|on-exit-leak-free|atomic-sleep|safe-stable-stringify)\//.test(
      url,
    )
  )
    return 'log line (pino)';
  if (/\/node_modules\/(prom-client|tdigest|bintrees)\//.test(url)) return 'metrics (prom-client)';
  if (/\/node_modules\/(ajv|fast-deep-equal|fast-uri|json-schema-traverse)\//.test(url))
    return 'envelope decoding (ajv)';
  if (
    /\/node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|abstract-logging|process-warning|fast-json-stringify|fast-querystring|toad-cache|rfdc|secure-json-parse|content-type|proxy-addr|forwarded|ipaddr\.js\/lib\/ipaddr\.js.*fastify)\//.test(
      url,
    )
  )
    return 'Fastify lifecycle (routing, hooks, reply)';
  if (/\/(dist|src)\/http\/(body|body-budget|json-depth)\.js$/.test(url)) return 'body reader + JSON.parse';
  // The raw-node baseline reads, parses and answers in one handler; bare Fastify's only answers.
  if (/\/bench\/baseline-server\.js$/.test(url)) return 'body reader + JSON.parse';
  if (/\/bench\/(fastify-server|lib\/bare-fastify)\.js$/.test(url)) return 'admission handler';
  if (/\/(dist|src)\/admission\/decode\.js$/.test(url)) return 'envelope decoding (ajv)';
  if (/\/(dist|src)\/admission\/encode\.js$/.test(url)) return 'encoding + JSON.stringify';
  if (/\/(dist|src)\/(rules|webhooks|json)\//.test(url)) return 'rules';
  if (/\/(dist|src)\/http\/(metrics|limit-metrics)\.js$/.test(url)) return 'metrics (prom-client)';
  if (/\/(dist|src)\/http\/(review-record|log-text)\.js$/.test(url)) return 'log line (pino)';
  if (/\/(dist|src)\/(http\/admission-routes|admission\/answer|cluster\/allocation-prefetch)\.js$/.test(url))
    return 'admission handler';
  if (/\/(dist|src)\/http\/(app|connections|caps)\.js$/.test(url))
    return 'Fastify lifecycle (routing, hooks, reply)';
  return 'other';
}

export interface BucketFigures {
  /** Microseconds of samples per bucket (idle excluded). */
  readonly us: Record<Bucket, number>;
  readonly totalUs: number;
  readonly idleUs: number;
}

/**
 * Buckets the samples taken between `fromUs` and `toUs` (the profile's
 * monotonic clock, the one process.hrtime reads), or all of them.
 */
export function bucketProfile(profile: CpuProfile, fromUs = -Infinity, toUs = Infinity): BucketFigures {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const memo = new Map<number, Bucket | 'idle'>();
  const bucketOf = (id: number): Bucket | 'idle' => {
    const cached = memo.get(id);
    if (cached) return cached;
    let result: Bucket | 'idle' = 'other';
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const c = classify(byId.get(cur)!.callFrame);
      if (c !== 'transparent') {
        result = c;
        break;
      }
    }
    memo.set(id, result);
    return result;
  };
  const us = Object.fromEntries(BUCKETS.map((b) => [b, 0])) as Record<Bucket, number>;
  let idleUs = 0;
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (t < fromUs || t > toUs) continue;
    // A sample stands for the time until the next one.
    const span = profile.timeDeltas[i + 1] ?? delta;
    const b = bucketOf(profile.samples[i]!);
    if (b === 'idle') idleUs += span;
    else us[b] += span;
  }
  return { us, totalUs: BUCKETS.reduce((s, b) => s + us[b], 0), idleUs };
}
