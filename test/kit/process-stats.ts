/** Memory and CPU figures of a process, from /proc (Linux only). */
import { readFileSync } from 'node:fs';

/** Resident set size figures from /proc/<pid>/status, in MiB: all, anonymous (the heap) and the peak. */
export function memoryOf(pid: number): { rssMiB: number; anonMiB: number; hwmMiB: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
    return { rssMiB: kb('VmRSS') / 1024, anonMiB: kb('RssAnon') / 1024, hwmMiB: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Samples VmRSS and RssAnon every `everyMs` until stopped (MiB); no sample once the process is gone. */
export function sampleMemoryParts(
  pid: number,
  everyMs = 250,
): { stop: () => { rss: number[]; anon: number[] } } {
  const rss: number[] = [];
  const anon: number[] = [];
  const take = () => {
    const m = memoryOf(pid);
    if (!m) return;
    rss.push(m.rssMiB);
    anon.push(m.anonMiB);
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      take();
      return { rss, anon };
    },
  };
}

/** Samples VmRSS every `everyMs` until stopped; returns the samples (MiB). */
export function sampleMemory(pid: number, everyMs = 250): { stop: () => number[] } {
  const parts = sampleMemoryParts(pid, everyMs);
  return { stop: () => parts.stop().rss };
}

/** CPU time (user + system) a process has used so far, in milliseconds. */
export function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11], fields[12]: utime, stime in clock ticks (USER_HZ, 100 on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}
