/**
 * parseJsonBody skips the nesting scan for bodies too short to be valid JSON
 * nested too deep, and scans them only when the parse fails. Its answers must
 * be the ones of the plain order (scan, then parse) for every text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HttpError, parseJsonBody } from '../../src/http/body.js';
import { nestsDeeperThan } from '../../src/http/json-depth.js';

/** The answer of the order the reader had before: the scan first, then JSON.parse. */
function scanThenParse(bytes: Buffer, maxDepth: number): unknown {
  if (bytes.length === 0) return ['error', 'empty body: expected an AdmissionReview'];
  if (nestsDeeperThan(bytes, maxDepth)) return ['error', `body nests deeper than ${maxDepth} levels`];
  try {
    return ['body', JSON.parse(bytes.toString('utf8')) as unknown];
  } catch {
    return ['error', 'body is not valid JSON'];
  }
}

function answerOf(bytes: Buffer, maxDepth: number): unknown {
  const parsed = parseJsonBody(bytes, maxDepth);
  if (!(parsed instanceof HttpError)) return ['body', parsed.body];
  expect(parsed.statusCode).toBe(400);
  // The parse error's own text comes from V8; its prefix is the project's.
  return ['error', parsed.message.replace(/^(body is not valid JSON):.*$/s, '$1')];
}

describe('parseJsonBody', () => {
  it('answers as the scan-then-parse order does, for texts on both sides of the length bound', () => {
    const piece = fc.constantFrom('[', ']', '{', '}', '"', '\\', '1', ',', ':', ' ', '"a":', '[]', 'é');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.integer({ min: 0, max: 8 }), (parts, limit) => {
        const bytes = Buffer.from(parts.join(''), 'utf8');
        expect(answerOf(bytes, limit)).toEqual(scanThenParse(bytes, limit));
      }),
      { numRuns: 3_000 },
    );
  });

  it('names the nesting, not the parse error, for a short body that is both too deep and not JSON', () => {
    // 7 bytes, under the 2 × (3 + 1) a valid body this deep needs: parsed first, then scanned.
    expect(answerOf(Buffer.from('[[[[1]]'), 3)).toEqual(['error', 'body nests deeper than 3 levels']);
    expect(answerOf(Buffer.from('[[[1]]]'), 3)).toEqual(['body', [[[1]]]]);
    // Exactly the bound: the shortest valid text one level too deep is scanned before the parse.
    expect(answerOf(Buffer.from('[[[[]]]]'), 3)).toEqual(['error', 'body nests deeper than 3 levels']);
  });
});
