/**
 * Request fields copied into log lines are capped: the envelope allows a name
 * or namespace of any length, and a 1 MiB namespace would otherwise make a
 * 1 MiB log line. Kubernetes names are at most 253 characters, so the cap
 * never shortens a real one.
 */
export const MAX_LOGGED_CHARS = 256;

/** The string itself when short; otherwise its start and how much was cut. */
export function clip(value: string, max?: number): string;
export function clip(value: string | undefined, max?: number): string | undefined;
export function clip(value: string | undefined, max = MAX_LOGGED_CHARS): string | undefined {
  if (value === undefined || value.length <= max) return value;
  return `${value.slice(0, max)}...(${value.length - max} more characters)`;
}
