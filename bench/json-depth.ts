/**
 * The nesting pre-scan against JSON.parse on the same bodies: the scan must
 * cost little next to the parse it guards. Prints one ratio per body shape.
 * `npm run bench -- depth`.
 */
import { nestsDeeperThan, MAX_JSON_DEPTH } from '../src/http/json-depth.js';
import { createSmallReview, uidFor } from '../test/kit/payloads.js';

function timePerRun(fn: () => void, minMs = 300): number {
  for (let i = 0; i < 5; i++) fn();
  let runs = 0;
  const start = performance.now();
  while (performance.now() - start < minMs) {
    fn();
    runs++;
  }
  return (performance.now() - start) / runs;
}

function review(annotation: unknown): Buffer {
  const r = createSmallReview(uidFor(1)) as { request: { object: { metadata: Record<string, unknown> } } };
  r.request.object.metadata['annotations'] = { a: annotation };
  return Buffer.from(JSON.stringify(r));
}

const shapes: [string, Buffer][] = [
  ['small review (create-small)', review('x')],
  ['64 KiB review (mixed)', review(Array.from({ length: 2_000 }, (_, i) => ({ k: `v${i}`, n: [i] })))],
  ['6 MB string annotation', review('x'.repeat(6 << 20))],
  ['6 MB flat array of numbers', review(Array.from({ length: 1 << 20 }, (_, i) => i % 100_000))],
  ['6 MB of small objects', review(Array.from({ length: 300_000 }, () => ({ k: 'v', n: 1 })))],
];

console.log('body | bytes | scan ms | JSON.parse ms | scan/parse');
for (const [name, bytes] of shapes) {
  const scan = timePerRun(() => nestsDeeperThan(bytes, MAX_JSON_DEPTH));
  const parse = timePerRun(() => JSON.parse(bytes.toString('utf8')));
  console.log(
    `${name} | ${bytes.length} | ${scan.toFixed(4)} | ${parse.toFixed(4)} | ${(scan / parse).toFixed(3)}`,
  );
}
