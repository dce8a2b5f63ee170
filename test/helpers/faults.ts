/**
 * Fault kernels for pool tests: tasks the fixture worker (test/fixtures/fault-worker.ts) runs.
 * They travel as kernel tasks, so the pool treats them exactly like a misbehaving kernel.
 */
import type { KernelTask } from '../../src/lib/tasks.js';

/** The fixture worker module: `buildTestApp(overrides, { faults: true })` starts the pool with it. */
export const FAULT_WORKER = new URL('../fixtures/fault-worker.ts', import.meta.url);

/**
 * Holds a thread for `ms` of busy wall time. The pool learns one cost estimate per kernel id; `as`
 * names the estimate this task shares (default: one per duration), so a test can make a task
 * overrun what the pool expects of it.
 */
export function spin(ms: number, as: string = String(ms)): KernelTask {
  return { kind: 'kernel', id: `fault/spin/${as}`, params: { ms } };
}

/** Spins until the whole process has used `cpuMs` more CPU time (however long that takes in wall time). */
export function burn(cpuMs: number): KernelTask {
  return { kind: 'kernel', id: 'fault/burn', params: { cpuMs } };
}

/** Ends its worker thread (process.exit in a worker stops that thread only). */
export const exitFault = (): KernelTask => ({ kind: 'kernel', id: 'fault/exit', params: {} });

/** Keeps allocating until its thread's heap cap (`pool.maxOldGenerationSizeMb`) ends it, or gives up at `mb` MiB. */
export const hoard = (mb: number): KernelTask => ({ kind: 'kernel', id: 'fault/hoard', params: { mb } });

/** Throws out of the worker's handler instead of answering an envelope. */
export const throwFault = (): KernelTask => ({ kind: 'kernel', id: 'fault/throw', params: {} });
