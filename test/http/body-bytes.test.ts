/**
 * A body's bytes come out exactly as they went in, whether a Content-Length let
 * them be copied into one buffer as they arrived or they were joined at the end.
 */
import { describe, expect, it, vi } from 'vitest';
import { BodyBytes } from '../../src/http/body-bytes.js';

const text = '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"ü✓"}}';
const whole = Buffer.from(text);

/** `bytes` cut into chunks of `size` bytes (the last one shorter). */
function chunksOf(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(Buffer.from(bytes.subarray(at, at + size)));
  return out;
}

function collect(expected: number | undefined, chunks: Buffer[]): BodyBytes {
  const bytes = new BodyBytes(expected);
  for (const c of chunks) bytes.append(c);
  return bytes;
}

describe('BodyBytes', () => {
  it.each([1, 3, 7, 64, 1_000])(
    'gives back the body cut into %i-byte chunks, with and without a declared length',
    (size) => {
      const chunks = chunksOf(whole, size);
      for (const expected of [whole.length, undefined]) {
        const bytes = collect(expected, chunks);
        expect(bytes.size).toBe(whole.length);
        expect(bytes.take().equals(whole)).toBe(true);
      }
    },
  );

  it("copies the chunks: reusing a chunk's memory afterwards does not change the body", () => {
    for (const expected of [whole.length, undefined]) {
      const chunks = chunksOf(whole, 8);
      const body = collect(expected, chunks).take();
      for (const c of chunks) c.fill(0x20);
      expect(body.toString()).toBe(text);
    }
  });

  it('holds only the bytes that came when fewer than declared arrived', () => {
    const half = whole.subarray(0, 20);
    expect(
      collect(whole.length, [Buffer.from(half)])
        .take()
        .equals(half),
    ).toBe(true);
  });

  it.each([4, 10, 12])('keeps bytes beyond the declared length too, in order (%i-byte chunks)', (size) => {
    const declared = 10;
    const body = collect(declared, chunksOf(whole, size)).take();
    expect(body.equals(whole)).toBe(true);
  });

  it('gives back a body that came in one chunk as that chunk: nothing allocated or copied', () => {
    const chunk = Buffer.from(whole);
    const allocate = vi.spyOn(Buffer, 'allocUnsafe');
    try {
      expect(collect(whole.length, [chunk]).take()).toBe(chunk);
      expect(allocate).not.toHaveBeenCalled();
    } finally {
      allocate.mockRestore();
    }
  });

  it('copies the first chunk once a second comes: changing it afterwards does not change the body', () => {
    const [one, two] = chunksOf(whole, 40);
    const bytes = collect(whole.length, [one!]);
    bytes.append(two!);
    one!.fill(0x20);
    expect(bytes.take().subarray(0, 80).toString()).toBe(whole.subarray(0, 80).toString());
  });

  it('is empty after take() and after clear()', () => {
    const bytes = collect(whole.length, chunksOf(whole, 5));
    bytes.take();
    expect(bytes.size).toBe(0);
    expect(bytes.take().length).toBe(0);
    const cleared = collect(undefined, chunksOf(whole, 5));
    cleared.clear();
    expect(cleared.size).toBe(0);
    expect(cleared.take().length).toBe(0);
  });

  it('never joins a body that came in its declared length: each chunk is copied into one buffer', () => {
    for (const size of [1, 7, whole.length]) {
      const chunks = chunksOf(whole, size);
      const concat = vi.spyOn(Buffer, 'concat');
      try {
        const body = collect(whole.length, chunks).take();
        expect(concat).not.toHaveBeenCalled();
        expect(body.equals(whole)).toBe(true);
      } finally {
        concat.mockRestore();
      }
    }
  });

  it('allocates nothing before the first chunk', () => {
    const bytes = new BodyBytes(7 * 1024 * 1024);
    expect(bytes.take().length).toBe(0);
  });
});
