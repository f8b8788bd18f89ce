/**
 * Defensive reading of decoded JSON. Objects that arrive from the network are
 * read through these functions only, so that a key such as `constructor`
 * or `__proto__` never reaches Object.prototype and a list or a string where
 * an object belongs reads as "absent". Pure: no Node built-ins.
 */

/** A decoded JSON object, read-only. */
export type JsonRecord = Readonly<Record<string, unknown>>;

/** A plain JSON object, or undefined: arrays and primitives are not records. */
export function asRecord(value: unknown): JsonRecord | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonRecord)
    : undefined;
}

/** Reads an own property only, so `constructor` or `__proto__` keys never reach Object.prototype. */
export function own(record: JsonRecord | undefined, key: string): unknown {
  return record !== undefined && Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}

/** An own property that is a string; anything else (absent, a number, an object) reads as undefined. */
export function stringAt(record: JsonRecord | undefined, key: string): string | undefined {
  const value = own(record, key);
  return typeof value === 'string' ? value : undefined;
}

/** An own property that is a number; anything else reads as undefined. */
export function numberAt(record: JsonRecord | undefined, key: string): number | undefined {
  const value = own(record, key);
  return typeof value === 'number' ? value : undefined;
}
