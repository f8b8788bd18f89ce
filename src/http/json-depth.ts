/**
 * How deeply a JSON text nests, measured on the bytes before JSON.parse builds
 * anything. The apiserver's own decoder refuses more than 10,000 levels, so no
 * real review nests deeper, while a few megabytes of `[[[[…` would otherwise
 * become millions of arrays in memory. No allocation; brackets inside
 * strings do not count. In UTF-8 every byte of a multi-byte character is ≥ 0x80,
 * so scanning bytes for `"`, `\`, brackets and braces is exact.
 */

/** The Kubernetes JSON decoder's nesting limit (apimachinery util/json maxDepth). */
export const MAX_JSON_DEPTH = 10_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * True when some point of `bytes` is nested more than `limit` levels deep.
 * Malformed text is not judged here (JSON.parse does that); unbalanced closing
 * brackets only lower the running depth.
 */
export function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  // Every level takes a byte: a body no longer than the limit cannot pass it
  // (most real reviews, which are then not scanned at all).
  if (bytes.length <= limit) return false;
  // Every level opens with a bracket: a body with no more than `limit` of them
  // cannot pass it, brackets in strings included (every real review: 1,125 in a
  // 39 KB update). Counted with indexOf (memchr), this is several times cheaper
  // than the scan below, which then runs only for bodies that could be too deep.
  if (openingBrackets(bytes, limit) <= limit) return false;
  let depth = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!;
    if (b === QUOTE) {
      i = stringEnd(bytes, i + 1);
      if (i < 0) return false;
    } else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) depth--;
  }
  return false;
}

/** How many `[` and `{` bytes `bytes` holds, counting no further than `limit + 1`. */
function openingBrackets(bytes: Uint8Array, limit: number): number {
  let n = 0;
  for (let at = bytes.indexOf(OPEN_OBJECT); at >= 0 && n <= limit; at = bytes.indexOf(OPEN_OBJECT, at + 1))
    n++;
  for (let at = bytes.indexOf(OPEN_ARRAY); at >= 0 && n <= limit; at = bytes.indexOf(OPEN_ARRAY, at + 1)) n++;
  return n;
}

/**
 * Index of the quote closing the string that starts at `from`, or -1 when none
 * does. indexOf runs natively (memchr), which keeps long strings, most of a big
 * body's bytes, as cheap as JSON.parse's own scan; a quote preceded by an odd
 * number of backslashes is escaped and skipped.
 */
function stringEnd(bytes: Uint8Array, from: number): number {
  for (let at = from; ;) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (quote - backslashes - 1 >= from && bytes[quote - backslashes - 1] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    at = quote + 1;
  }
}
