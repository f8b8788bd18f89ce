/** Waiting in tests and benchmarks: the one `sleep` and the one wait-until. */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `probe` every `stepMs` (real time) until it holds; rejects after `timeoutMs` naming
 * `what`. Resolves with the milliseconds it waited.
 */
export async function eventually(
  probe: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
  stepMs = 20,
): Promise<number> {
  const start = performance.now();
  while (!(await probe())) {
    if (performance.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(stepMs);
  }
  return performance.now() - start;
}
