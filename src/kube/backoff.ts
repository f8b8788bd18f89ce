/**
 * Capped exponential backoff with jitter: the one way this program computes how long to wait
 * before trying the API server again (a watch restart, a lookup probe, a report write, a params
 * write). The jitter keeps replicas that failed together from retrying in step. The randomness is
 * passed in, so a test can fix it.
 */

/** A number in [0, 1), as Math.random gives. */
export type Random = () => number;

/** The wait is the capped delay times `floor + spread × random()`. */
export interface Jitter {
  readonly floor: number;
  readonly spread: number;
}

/** ±20 %: 0.8 to 1.2 times the capped delay. */
export const JITTER_20_PERCENT: Jitter = { floor: 0.8, spread: 0.4 };

/** Half of it jitter: 0.5 to 1 times the capped delay, never more than the cap. */
export const JITTER_HALF: Jitter = { floor: 0.5, spread: 0.5 };

export interface BackoffPolicy {
  /** The wait after the first failure (and after none). */
  readonly initialMs: number;
  /** The largest wait before jitter. */
  readonly maxMs: number;
  /** Growth per failure; default 2 (doubling). */
  readonly factor?: number;
  /** Default ±20 %. */
  readonly jitter?: Jitter;
}

/**
 * The wait (whole milliseconds) before the next try after `failures` failures in a row:
 * initialMs × factor^(failures − 1), at most maxMs, then jittered. A Retry-After is the caller's
 * to add (each caller bounds it its own way).
 */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: Random): number {
  const factor = policy.factor ?? 2;
  const capped = Math.min(policy.maxMs, policy.initialMs * factor ** Math.max(0, failures - 1));
  const { floor, spread } = policy.jitter ?? JITTER_20_PERCENT;
  return Math.round(capped * (floor + spread * random()));
}
