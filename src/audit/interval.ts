/** `--audit-interval`: `0` (off) or a whole number of seconds, minutes or hours (`90s`, `5m`, `1h`). */
import type { Parsed } from '../config/flags.js';

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000 };
/** Below this a pass could follow a pass back to back on a large cluster; above a day nobody would notice drift. */
const MIN_MS = 10_000;
const MAX_MS = 86_400_000;

export function parseAuditInterval(text: string): Parsed<number> {
  if (text === '0') return { ok: true, value: 0 };
  const m = /^(\d{1,6})(s|m|h)$/.exec(text);
  const ms = m ? Number(m[1]) * UNIT_MS[m[2]!]! : Number.NaN;
  if (!Number.isFinite(ms) || ms < MIN_MS || ms > MAX_MS)
    return {
      ok: false,
      error: `--audit-interval: "${text}" is not 0 (off) or a duration from 10s to 24h (e.g. 90s, 5m, 1h)`,
    };
  return { ok: true, value: ms };
}
