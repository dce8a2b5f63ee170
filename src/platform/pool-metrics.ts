/** The pool's counters and the snapshots /health and the metrics scrape read from them. */
import type { Piscina } from 'piscina';
import type { PoolSnapshot } from '../observability/metrics.js';
import { threadLost } from './task-results.js';

export interface PoolState {
  threads: number;
  queueSize: number;
  /** Share of threads running a task right now (piscina's own figure costs ~0.3 ms to read). */
  busy: number;
  completed: number;
  maxQueue: number;
  crashes: number;
}

/** What the lanes count: threads lost, tasks killed past their deadline, tasks shed. */
export class PoolCounters {
  crashes = 0;
  /** Running tasks past their deadline + grace, terminated (their threads replaced). */
  killed = 0;
  /** Tasks refused at admission or, later, at dispatch. */
  shed = 0;
  /** Of those, tasks shed at dispatch: admitted, but their deadline no longer fit their run. */
  shedLate = 0;

  /** Counts the task's thread as lost when its error says so (also when its caller was answered already). */
  noteLost(err: unknown): boolean {
    if (!threadLost(err)) return false;
    this.crashes++;
    return true;
  }
}

/** Cheap counters, safe on hot paths such as /health. */
export function poolState(kernels: Piscina, lane: { queued: number; runningCount: number }, threads: number, maxQueue: number, counters: PoolCounters): PoolState {
  return {
    threads: kernels.threads.length,
    queueSize: lane.queued,
    busy: lane.runningCount / Math.max(1, threads),
    completed: kernels.completed,
    maxQueue,
    crashes: counters.crashes,
  };
}

/** `state` plus piscina's utilisation and latency percentiles: piscina summarises its histograms
 * on every read (~0.3–0.5 ms each), so this is for the metrics scrape only. */
export function detailedPoolState(kernels: Piscina, state: PoolState, counters: PoolCounters): PoolSnapshot {
  const h = kernels.histogram;
  return {
    ...state,
    utilization: kernels.utilization,
    waitP99Ms: h.waitTime?.p99 ?? 0,
    runP99Ms: h.runTime?.p99 ?? 0,
    rejections: { admission: counters.shed - counters.shedLate, dispatch: counters.shedLate, killed: counters.killed },
  };
}
