/**
 * The longest stretch of main-thread work while a call runs. A 1 ms interval probe cannot fire
 * while the loop is busy, so between two ticks lies at most one stretch of work; what the main
 * thread spent in that gap is the stretch. It is read as the thread's own CPU time
 * (/proc/thread-self/schedstat, Linux) so that a machine shared with other processes (the loop
 * waiting for a CPU) does not count as a block; elsewhere the loop's active time (ELU) is used,
 * which counts such waits too. Garbage collection on the main thread counts (a route that
 * allocates heavily pays for it); the longest GC pause (wall time) is reported beside.
 */
import { readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

function cpuMsReader(): () => number {
  try {
    readFileSync('/proc/thread-self/schedstat', 'utf8');
    return () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return () => performance.eventLoopUtilization().active;
  }
}

export interface LoopBlock {
  /** Longest main-thread stretch, in ms of the thread's CPU time. */
  blockMs: number;
  /** Longest GC pause seen meanwhile, in ms of wall time. */
  gcMs: number;
}

export async function loopBlockDuring(fn: () => Promise<unknown>): Promise<LoopBlock> {
  const cpuMs = cpuMsReader();
  let gcMs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs = Math.max(gcMs, e.duration);
  });
  observer.observe({ entryTypes: ['gc'] });
  let blockMs = 0;
  let last = cpuMs();
  const tick = (): void => {
    const now = cpuMs();
    blockMs = Math.max(blockMs, now - last);
    last = now;
  };
  const probe = setInterval(tick, 1);
  try {
    await fn();
    // one more tick, so a block at the very end is seen too; GC entries arrive a little late
    await new Promise((r) => setTimeout(r, 5));
  } finally {
    clearInterval(probe);
    tick();
    observer.disconnect();
  }
  return { blockMs, gcMs };
}
