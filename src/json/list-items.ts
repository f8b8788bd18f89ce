/**
 * A Kubernetes list answer split without decoding its items: the envelope
 * (apiVersion, kind, metadata with the continue token) decoded at once, each
 * element of the top-level `items` array kept as its own JSON text and decoded
 * only when read. A reader that handles one item at a time then holds one
 * item's objects, not the whole page's; decoded all at once, a page's objects
 * outlive the young generation while the page is worked through and fill the
 * old one (docs/dev/benchmarks.md, the audit at 100,000 Gateways). Pure: no Node
 * built-ins.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** The index of the quote that closes the string opened at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let before = quote - 1;
    while (text.charCodeAt(before) === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote; // an even run of backslashes: not escaped
    from = quote + 1;
  }
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function nextNonSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** A list answer's envelope and its items' texts. */
export class SplitList {
  constructor(
    /** The answer with `items` an empty array. */
    readonly envelope: unknown,
    /** Each element of `items` as JSON text, in order. */
    readonly items: readonly string[],
  ) {}
}

/**
 * Reads the text once, tracking depth, keys of the top-level object and the
 * latest `items` array's element boundaries.
 */
class BoundsScanner {
  private depth = 0;
  private keyStart = -1;
  private keyEnd = -1;
  private expectKey = false;
  /** Where the array of the latest `items` key opens. */
  private itemsOpen = -1;
  /** Bounds of the items array being read. */
  private current: number[] | undefined;
  /** Bounds of the last complete `items` array. */
  found: number[] | undefined;

  constructor(private readonly text: string) {}

  /** False when the text cannot be split (unbalanced, or an `items` that is not an array). */
  scan(): boolean {
    const { text } = this;
    const first = nextNonSpace(text, 0);
    if (text.charCodeAt(first) !== OPEN_BRACE) return false;
    for (let i = first; i < text.length; i++) {
      const next = this.step(i, text.charCodeAt(i));
      if (next < 0) return false;
      i = next;
    }
    return this.depth === 0;
  }

  /** Reads the character at `i`; returns where reading goes on (minus one), or -1 to give up. */
  private step(i: number, code: number): number {
    if (code === QUOTE) {
      const end = stringEnd(this.text, i);
      if (end >= 0 && this.depth === 1 && this.expectKey) [this.keyStart, this.keyEnd] = [i, end];
      return end;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) this.open(i);
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) return this.close(i) ? i : -1;
    else if (code === COMMA) this.comma(i);
    else if (code === COLON && this.depth === 1 && this.expectKey) return this.member(i) ? i : -1;
    return i;
  }

  private open(i: number): void {
    this.depth++;
    if (this.depth === 1) this.expectKey = true;
    if (i === this.itemsOpen) this.current = [i];
  }

  private close(i: number): boolean {
    this.depth--;
    if (this.depth < 0) return false;
    if (this.depth === 1 && this.current) {
      this.current.push(i);
      this.found = this.current;
      this.current = undefined;
    }
    return true;
  }

  private comma(i: number): void {
    if (this.depth === 1) this.expectKey = true;
    else if (this.depth === 2 && this.current) this.current.push(i);
  }

  /** A member of the top-level object starts its value after `i`; false for an `items` that is no array. */
  private member(i: number): boolean {
    this.expectKey = false;
    if (this.keyStart < 0) return true;
    const key: unknown = JSON.parse(this.text.slice(this.keyStart, this.keyEnd + 1));
    if (key !== 'items') return true;
    // A later `items` wins, as in JSON.parse: one that is not an array makes the answer not a list.
    this.found = undefined;
    const value = nextNonSpace(this.text, i + 1);
    this.itemsOpen = this.text.charCodeAt(value) === OPEN_BRACKET ? value : -1;
    return this.itemsOpen >= 0;
  }
}

/**
 * Where the top-level `items` array's elements are: the indices of its `[`,
 * of the commas between its elements and of its `]`. undefined when the text
 * is not an object whose last `items` member (as JSON.parse reads duplicate
 * keys) is an array, or when its brackets or strings do not balance.
 */
function itemBounds(text: string): number[] | undefined {
  const scanner = new BoundsScanner(text);
  return scanner.scan() ? scanner.found : undefined;
}

/**
 * The answer split (its envelope decoded: throws as JSON.parse does when the
 * envelope is not JSON), or undefined when it has no top-level `items` array
 * to split; the caller then decodes it whole. An item that is not JSON throws
 * only when it is decoded.
 */
export function splitList(text: string): SplitList | undefined {
  let bounds: number[] | undefined;
  try {
    bounds = itemBounds(text);
  } catch {
    return undefined; // a key that is not JSON: decoded whole, the answer throws there
  }
  if (!bounds) return undefined;
  const open = bounds[0]!;
  const close = bounds[bounds.length - 1]!;
  const envelope: unknown = JSON.parse(text.slice(0, open + 1) + text.slice(close));
  const items: string[] = [];
  for (let k = 0; k + 1 < bounds.length; k++) items.push(text.slice(bounds[k]! + 1, bounds[k + 1]));
  // `[ ]`: one blank stretch is no item at all.
  if (items.length === 1 && nextNonSpace(items[0]!, 0) === items[0]!.length) items.length = 0;
  return new SplitList(envelope, items);
}
