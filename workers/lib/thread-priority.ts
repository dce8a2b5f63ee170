/** Scheduling of worker threads on Linux, where a nice value belongs to a thread, not the process. */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** This thread's id for the scheduler (Linux: /proc/thread-self -> <pid>/task/<tid>), or null. */
export function threadId(): number | null {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/**
 * Raises thread `tid`'s nice value by `increment`, so the main thread (HTTP, /health) and the
 * signing lane keep their priority. It needs no privilege; where it is refused or unsupported the
 * thread runs as before.
 */
export function stepBack(tid: number | null, increment: number): void {
  if (tid === null || !increment) return;
  try {
    setPriority(tid, Math.min(19, getPriority(tid) + increment));
  } catch {
    // not permitted here: normal priority
  }
}
