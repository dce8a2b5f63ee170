/**
 * Admission efficiency, in-process: tasks that each hold a thread for a set wall-clock time (a
 * busy spin of 50-150 ms, one cost estimate for all, as one kernel's runs vary) arrive at 4x the
 * pool's capacity. Successes per second over capacity measure what admission keeps: threads left
 * idle by a too-strict queue, or held by tasks answered 504, lower it. Wall-clock spins make the
 * figure independent of how much CPU other processes leave the pool (the HTTP overload scenario
 * is not), so it compares across runs on a shared machine.
 */
import pino from 'pino';
import { WorkerPool } from '../src/platform/pool.js';
import { FAULT_WORKER, spin } from '../test/helpers/faults.js';

export interface AdmissionResult {
  capacityPerS: number;
  ratePerS: number;
  outcomes: Record<string, number>;
  /** Successes per second (over the arrival window) / capacity. */
  kept: number;
}

export async function admissionBench(durationS = 8, meanMs = 100): Promise<AdmissionResult> {
  const threads = 2;
  const cfg = { threads, maxQueue: 256, taskDeadlineMs: 2000, idleTimeoutMs: 60_000, maxOldGenerationSizeMb: 256, retryAfterS: 1, signThreads: 1, killGraceMs: 1000, niceIncrement: 0, warmup: false, warmupPasses: 1 };
  // the spins are fault kernels of the test fixture worker: the production host has none
  const pool = new WorkerPool(cfg, threads, pino({ level: 'silent' }), undefined, { kernelWorker: FAULT_WORKER });
  try {
    await pool.ready();
    // the estimate starts at one mean-length run, not at the pool's guess for an unknown kernel
    await pool.run(spin(meanMs, 'kernel'));
    let seed = 42;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const capacityPerS = (threads * 1000) / meanMs;
    const ratePerS = capacityPerS * 4;
    const outcomes: Record<string, number> = {};
    const count = (k: string): void => void (outcomes[k] = (outcomes[k] ?? 0) + 1);
    const started = performance.now();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < ratePerS * durationS; i++) {
      await new Promise((r) => setTimeout(r, Math.max(0, started + (i * 1000) / ratePerS - performance.now())));
      const ms = Math.round(meanMs / 2 + random() * meanMs);
      // successes are counted while arrivals last, so the queue draining afterwards adds nothing
      const inWindow = (): boolean => performance.now() - started <= durationS * 1000;
      pending.push(
        pool.run(spin(ms, 'kernel')).then(
          () => count(inWindow() ? 'ok' : 'ok_after_window'),
          (e: { code?: string }) => count(e.code ?? 'error'),
        ),
      );
    }
    await Promise.all(pending);
    return { capacityPerS, ratePerS, outcomes, kept: (outcomes.ok ?? 0) / durationS / capacityPerS };
  } finally {
    await pool.destroy();
  }
}
