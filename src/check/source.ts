/**
 * One input's text and a line index built on first use, so that inputs
 * without findings never pay for line numbers.
 */
import type { Position } from '../findings/lines.js';

export class SourceText {
  private lineStarts: number[] | undefined;

  /** `path` is the display path: relative to the working directory when under it, `<stdin>` for `-`. */
  constructor(
    readonly path: string,
    readonly text: string,
  ) {}

  /** The position of a character offset (UTF-16 code units, as the `yaml` package counts). */
  position(offset: number): Position {
    const starts = (this.lineStarts ??= indexLines(this.text));
    const at = Math.max(0, Math.min(offset, this.text.length));
    // Binary search for the last line starting at or before `at`.
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: at - starts[lo]! + 1 };
  }
}

function indexLines(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** Decodes UTF-8 input and drops a byte-order mark, which editors do not count as a column. */
export function decodeText(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
