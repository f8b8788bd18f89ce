/**
 * Sorts `perf script` call chains (a server run with `node --perf-basic-prof`,
 * recorded with `perf record -e cpu-clock -g`) into the layers of a review's
 * cost. cpu-clock counts CPU time, not wall time: a process waiting for a core
 * is not sampled, so on a loaded machine the figures are the server's own
 * work. A sample goes to the first frame, from the leaf up, that names a
 * layer: native work with a kind of its own first (garbage collection,
 * JSON.parse, JSON.stringify, OpenSSL, llhttp, socket system calls), else the
 * innermost JavaScript frame that is not generic plumbing (buffers, events,
 * streams), by its script. So encrypting an answer is TLS whoever sent it,
 * and a `Buffer.copy` in the body reader is the body reader's.
 */

export const PERF_BUCKETS = [
  'TLS (OpenSSL, node:tls)',
  'HTTP parsing + response (llhttp, node:http)',
  'socket I/O (kernel, libuv, node:net)',
  'Fastify (routing, hooks, reply)',
  'body reader (budget, depth scan, copy)',
  'JSON.parse',
  'envelope decode (ajv)',
  'rules',
  'encode',
  'JSON.stringify',
  'admission handler (route, answer)',
  'review record + log line (pino)',
  'metrics (prom-client)',
  'per-connection (guard)',
  'timers',
  'garbage collection',
  'JIT compilation (warm-up)',
  'other JS',
  'other native',
] as const;
export type PerfBucket = (typeof PERF_BUCKETS)[number];

type Verdict = PerfBucket | 'transparent';

const NATIVE: readonly (readonly [RegExp, PerfBucket])[] = [
  [
    /v8::internal::(Heap|Scavenger|ScavengerCollector|MarkCompact|MinorMarkCompact|MinorMarkSweep|Sweeper|ConcurrentMarking|IncrementalMarking|GCTracer|MemoryAllocator|ArrayBufferSweeper|MarkingVisitor|MainMarkingVisitor|ConcurrentMarkingVisitor|EvacuateVisitor|Evacuator|PointersUpdating|YoungGeneration|ScavengeVisitor|StackGuard::HandleInterrupts)|v8::internal::heap::/,
    'garbage collection',
  ],
  [
    /v8::internal::(compiler|maglev|baseline|Compiler|OptimizingCompileDispatcher|BaselineBatchCompiler|Deoptimizer)|Builtins_(BaselineOutOfLinePrologue|CompileLazy)/,
    'JIT compilation (warm-up)',
  ],
  [/JsonParser|Builtin_JsonParse|JsonParse/, 'JSON.parse'],
  [/JsonStringif|Builtin_JsonStringify/, 'JSON.stringify'],
  [
    /^(SSL_|ssl3?_|tls1?3?_|tls_|EVP_|ossl_|aes|gcm|AES|CRYPTO_|sha|SHA|ChaCha|chacha|Poly1305|poly1305|OPENSSL|BIO_|bn_|BN_|ecp_|X25519|x25519|EC_|RAND_|rand_|md_|HMAC|hmac|_x86_64_AES|aesni|GFp|ghash|_aesni)|node::crypto::|node::TLSWrap|node::(anonymous namespace)::.*TLS/,
    'TLS (OpenSSL, node:tls)',
  ],
  [/llhttp|node::.*Parser|http_parser/, 'HTTP parsing + response (llhttp, node:http)'],
  [
    /^uv_|^uv__|LibuvStreamWrap|node::StreamBase|node::TCPWrap|node::ConnectionWrap|^epoll|node::StreamResource/,
    'socket I/O (kernel, libuv, node:net)',
  ],
];

const TRANSPARENT_URL = [
  /^node:buffer$/,
  /^node:events$/,
  /^node:internal\/(streams|util|validators|errors|process\/task_queues|async_hooks|buffer|fixed_queue|url|querystring)/,
  /^node:stream$/,
  /^node:fs$/,
  /^node:internal\/fs\//,
];

const FASTIFY_LIBS =
  /\/node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|abstract-logging|process-warning|fast-json-stringify|fast-querystring|toad-cache|rfdc|content-type|proxy-addr|forwarded)\//;
const PINO_LIBS =
  /\/node_modules\/(pino|sonic-boom|fast-redact|pino-std-serializers|quick-format-unescaped|thread-stream|on-exit-leak-free|atomic-sleep|safe-stable-stringify|fast-safe-stringify)\//;

const BY_URL: readonly (readonly [RegExp, PerfBucket])[] = [
  [/^node:(_tls|tls|internal\/tls)/, 'TLS (OpenSSL, node:tls)'],
  [/^node:(_http|http|https|internal\/http)/, 'HTTP parsing + response (llhttp, node:http)'],
  [/^node:(net|internal\/(net|stream_base_commons|js_stream))/, 'socket I/O (kernel, libuv, node:net)'],
  [/^node:(internal\/)?timers/, 'timers'],
  [/^node:(internal\/perf|perf_hooks)/, 'metrics (prom-client)'],
  [PINO_LIBS, 'review record + log line (pino)'],
  [/\/node_modules\/(prom-client|tdigest|bintrees)\//, 'metrics (prom-client)'],
  [/\/node_modules\/(ajv|fast-deep-equal|fast-uri|json-schema-traverse)\//, 'envelope decode (ajv)'],
  // Fastify's own body reading (its default JSON parser), the counterpart of the project's reader.
  [
    /\/node_modules\/(fastify\/lib\/content-?[tT]ype-?[pP]arser\.js|secure-json-parse\/)/,
    'body reader (budget, depth scan, copy)',
  ],
  [FASTIFY_LIBS, 'Fastify (routing, hooks, reply)'],
  [
    /\/(dist|src)\/http\/(body|body-budget|body-bytes|json-depth)\.js$/,
    'body reader (budget, depth scan, copy)',
  ],
  [/\/bench\/baseline-server\.js$/, 'body reader (budget, depth scan, copy)'],
  [/\/bench\/(fastify-server|lib\/bare-fastify)\.js$/, 'admission handler (route, answer)'],
  [/\/(dist|src)\/admission\/decode\.js$/, 'envelope decode (ajv)'],
  [/\/(dist|src)\/admission\/encode\.js$/, 'encode'],
  [/\/(dist|src)\/(rules|webhooks|json)\//, 'rules'],
  [/\/(dist|src)\/http\/(metrics|limit-metrics)\.js$/, 'metrics (prom-client)'],
  [/\/(dist|src)\/http\/(review-record|log-text)\.js$/, 'review record + log line (pino)'],
  [
    /\/(dist|src)\/(http\/admission-routes|admission\/answer|cluster\/allocation-prefetch)\.js$/,
    'admission handler (route, answer)',
  ],
  [/\/(dist|src)\/http\/(connections|caps|tls)\.js$/, 'per-connection (guard)'],
];

/** One frame of `perf script -F ip,sym,dso`: `JS:*name url:line:col` for JIT code, a C++ symbol otherwise. */
export function classifyFrame(sym: string, dso: string): Verdict {
  if (dso.includes('kernel')) return 'transparent';
  const js = /^JS:[*~^+-]?(\S*) (.*?)(?::\d+:\d+)?$/.exec(sym);
  if (js) {
    const [, name, url] = js as unknown as [string, string, string];
    if (/\/(dist|src)\/http\/app\.js$/.test(url))
      return name === 'respond'
        ? 'admission handler (route, answer)'
        : 'body reader (budget, depth scan, copy)';
    if (TRANSPARENT_URL.some((re) => re.test(url))) return 'transparent';
    for (const [re, bucket] of BY_URL) if (re.test(url)) return bucket;
    return url.startsWith('node:') ? 'transparent' : 'other JS';
  }
  for (const [re, bucket] of NATIVE) if (re.test(sym)) return bucket;
  return 'transparent';
}

export interface PerfFigures {
  /** Samples per bucket. */
  readonly samples: Record<PerfBucket, number>;
  readonly total: number;
}

/** Buckets every sample of `perf script -F tid,ip,sym,dso` output (stacks leaf first, blank-line separated). */
export function bucketPerfScript(text: string): PerfFigures {
  const samples = Object.fromEntries(PERF_BUCKETS.map((b) => [b, 0])) as Record<PerfBucket, number>;
  let total = 0;
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split('\n').slice(1).filter(Boolean);
    if (lines.length === 0) continue;
    total++;
    let bucket: PerfBucket | undefined;
    let sawJs = false;
    for (const line of lines) {
      const m = /^\s*[0-9a-f]+ (.*) \(([^)]*)\)\s*$/.exec(line);
      if (!m) continue;
      const [, sym, dso] = m as unknown as [string, string, string];
      if (sym.startsWith('JS:')) sawJs = true;
      const v = classifyFrame(sym, dso);
      if (v !== 'transparent') {
        bucket = v;
        break;
      }
    }
    samples[bucket ?? (sawJs ? 'other JS' : 'other native')]++;
  }
  return { samples, total };
}
