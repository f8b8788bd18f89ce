/**
 * JSON text of a decoded value without recursion. JSON.stringify (and String()
 * on arrays) recurse once per nesting level and throw a RangeError somewhere
 * around 5,000 levels, while a body the server accepts may nest 10,000 deep:
 * an explicit stack keeps every shape renderable. Output equals
 * JSON.stringify's for the values JSON.parse produces.
 */

/** Work items: a value to render, or literal text to append (closing brackets, commas). */
type Item = { text: string } | { value: unknown };

/** An array's elements and punctuation, last first (the stack pops the first). */
function pushArray(stack: Item[], v: readonly unknown[]): void {
  stack.push({ text: ']' });
  for (let i = v.length - 1; i >= 0; i--) {
    const element: unknown = v[i];
    stack.push({ value: element === undefined || typeof element === 'function' ? null : element });
    if (i > 0) stack.push({ text: ',' });
  }
}

/** An object's members as JSON.stringify writes them: undefined and functions left out. */
function pushObject(stack: Item[], v: Record<string, unknown>): void {
  const keys = Object.keys(v).filter((k) => v[k] !== undefined && typeof v[k] !== 'function');
  stack.push({ text: '}' });
  for (let i = keys.length - 1; i >= 0; i--) {
    stack.push({ value: v[keys[i]!] });
    stack.push({ text: `${JSON.stringify(keys[i])}:` });
    if (i > 0) stack.push({ text: ',' });
  }
}

/** Stops rendering once the text passes `max` characters (the caller adds an ellipsis). */
export function jsonText(value: unknown, max = Infinity): string {
  let out = '';
  const stack: Item[] = [{ value }];
  while (stack.length > 0 && out.length <= max) {
    const item = stack.pop()!;
    if ('text' in item) {
      out += item.text;
      continue;
    }
    const v = item.value;
    if (Array.isArray(v)) {
      pushArray(stack, v);
      out += '[';
    } else if (v !== null && typeof v === 'object') {
      pushObject(stack, v as Record<string, unknown>);
      out += '{';
    } else if (typeof v === 'bigint') {
      out += v.toString();
    } else {
      out += JSON.stringify(v) ?? 'null';
    }
  }
  return out;
}

/** String() for primitives, JSON text (capped) for arrays and objects. */
export function plainText(value: unknown, max = 256): string {
  if (value === null || typeof value !== 'object') return String(value);
  const text = jsonText(value, max);
  return text.length > max ? `${text.slice(0, max)}...` : text;
}
