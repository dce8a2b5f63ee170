/**
 * CPU time of the calling thread, in ms. A cost budget measured in wall time fails on a busy
 * machine, where a call mostly waits for a CPU; the thread's own CPU time counts only the work.
 * Linux reads /proc/thread-self/schedstat; elsewhere the process's user + system time stands in
 * (which also counts other threads, so it errs towards failing, never towards passing). The figure
 * advances at the scheduler's ticks (a few ms): it suits budgets of tens of ms and more.
 */
import { readFileSync } from 'node:fs';

function reader(): () => number {
  try {
    readFileSync('/proc/thread-self/schedstat', 'utf8');
    return () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
  }
}

export const threadCpuMs: () => number = reader();

/** The calling thread's CPU time spent in `fn`, in ms, with its result. */
export function cpuMsOf<T>(fn: () => T): { ms: number; value: T } {
  const t0 = threadCpuMs();
  const value = fn();
  return { ms: threadCpuMs() - t0, value };
}
