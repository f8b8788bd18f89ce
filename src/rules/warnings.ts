/** The admission warnings of one answer, kept within what the apiserver passes on. */
import { clampWarning } from './messages.js';

/** Total warning budget: the apiserver drops warnings past 4096 characters in all. */
const WARNINGS_TOTAL_MAX = 4000;

/** Each warning clamped; past the total budget, one line says how many were left out. */
export function budgetWarnings(lines: readonly string[]): string[] {
  const kept: string[] = [];
  let total = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = clampWarning(lines[i]!);
    if (total + line.length > WARNINGS_TOTAL_MAX - 60) {
      kept.push(`${lines.length - i} more warnings not shown`);
      break;
    }
    kept.push(line);
    total += line.length;
  }
  return kept;
}
