import { describe, expect, it } from 'vitest';
import { splitList } from '../../src/json/list-items.js';

/** What JSON.parse makes of the text, and what the split makes of it, item by item. */
function both(text: string): { whole: unknown; split: unknown } {
  const split = splitList(text);
  if (!split) throw new Error('not split');
  const envelope = split.envelope as Record<string, unknown>;
  expect(envelope['items']).toEqual([]);
  return {
    whole: JSON.parse(text),
    split: { ...envelope, items: split.items.map((t) => JSON.parse(t) as unknown) },
  };
}

describe('splitList', () => {
  it('reads a list answer as JSON.parse does: envelope at once, each item on its own', () => {
    const texts = [
      '{"kind":"GatewayList","metadata":{"continue":"abc","resourceVersion":"7"},"items":[{"a":1},{"b":[1,2,{"c":"]"}]}]}',
      '{"items":[]}',
      '{ "items" : [ ] , "metadata" : {} }',
      '{"items":[ 1 , "two" , null , true , [3] , {"x":{}} ]}',
      // Brackets, commas, colons and quotes inside strings; escaped backslashes before a quote.
      '{"items":[{"s":"a,b]c}d{[e:\\"f"},{"t":"\\\\"},{"u":"\\\\\\"]"}],"metadata":{"continue":""}}',
      // An `items` key inside an item or deeper is not the list's.
      '{"metadata":{"items":[9]},"items":[{"items":[1,2]},{"spec":{"items":"x"}}]}',
      // Duplicate keys: the last one counts, as in JSON.parse; an escaped key is the same key.
      '{"items":[1,2,3],"items":[4]}',
      '{"it\\u0065ms":[{"k":"v"}]}',
      '\n\t{"items":\n[\n{"a":"\\u005d"}\n]\n}\n',
    ];
    for (const text of texts) {
      const { whole, split } = both(text);
      expect(split, text).toEqual(whole);
    }
  });

  it('agrees with JSON.parse on generated lists', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const chars = ['a', '"', '\\', '[', ']', '{', '}', ',', ':', ' ', '\n', 'é', '\u2028'];
    const value = (depth: number): unknown => {
      const r = random();
      if (depth > 3 || r < 0.3)
        return Array.from(
          { length: Math.floor(random() * 6) },
          () => chars[Math.floor(random() * chars.length)],
        ).join('');
      if (r < 0.4) return Math.floor(random() * 1000) - 500;
      if (r < 0.45) return null;
      if (r < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(random() * 4) }, (_, i) => [
          `${value(9) as string}${i}`,
          value(depth + 1),
        ]),
      );
    };
    for (let n = 0; n < 300; n++) {
      const list = {
        kind: value(9),
        metadata: { continue: value(9) },
        items: Array.from({ length: Math.floor(random() * 5) }, () => value(0)),
      };
      const text = JSON.stringify(list, null, n % 3 === 0 ? 1 : undefined);
      const { whole, split } = both(text);
      expect(split).toEqual(whole);
    }
  });

  it('leaves anything that is not an object with an items array to JSON.parse', () => {
    for (const text of [
      '[{"items":[1]}]',
      '"items"',
      '{"metadata":{}}',
      '{"items":{"a":1}}',
      '{"items":null}',
      '{"items":[1],"items":"later"}',
      '{"items":[1,2}',
      '{"items":[1]',
      '{"items":["open]}',
      '{"items":[1]}}',
      '',
    ])
      expect(splitList(text), text).toBeUndefined();
  });

  it('throws as JSON.parse does when the envelope is not JSON, and leaves a bad item for its reader', () => {
    expect(() => splitList('{"kind":oops,"items":[]}')).toThrow(SyntaxError);
    const split = splitList('{"items":[{"ok":1},{bad}]}')!;
    expect(split.items).toHaveLength(2);
    expect(JSON.parse(split.items[0]!)).toEqual({ ok: 1 });
    expect(() => JSON.parse(split.items[1]!) as unknown).toThrow(SyntaxError);
  });
});
