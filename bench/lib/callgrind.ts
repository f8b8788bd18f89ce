/**
 * What `npm run bench -- count`, `npm run bench -- count-https` and `npm run bench -- count-layers` share: node
 * under valgrind's callgrind, one dump of the counters each time the driver
 * calls `os.getPriority()` (its marks), and the instruction total of a dump.
 */
import { readFileSync } from 'node:fs';

/** valgrind's arguments to run `script args…` in node under callgrind, writing dumps `out.N`. */
export function callgrindNodeArgs(out: string, script: string, args: readonly string[]): string[] {
  return [
    '--tool=callgrind',
    '--dump-before=uv_os_getpriority',
    `--callgrind-out-file=${out}`,
    process.execPath,
    '--expose-gc',
    // No background JIT, GC or worker threads: counts repeat within about 1 % (with them, how
    // much of their work falls in a count depends on timing).
    '--single-threaded',
    script,
    ...args,
  ];
}

/** The instructions counted in dump `n` of `out` (dump 1 is everything before the first mark). */
export function dumpTotal(out: string, n: number, who: string): number {
  const m = /^totals:\s+(\d+)/m.exec(readFileSync(`${out}.${n}`, 'utf8'));
  if (!m) throw new Error(`${who}: no totals in ${out}.${n}`);
  return Number(m[1]);
}
