/**
 * What a finished worker task gives its caller: its value, or an AppError of a known kind (queue
 * full → 503 + Retry-After, a failed or crashed task → 500; deadlines are the lanes' own 504).
 */
import { type AppError, Errors } from '../http/errors.js';
import type { TaskResult } from '../lib/tasks.js';
import type { Logger } from '../observability/logger.js';

/**
 * A task's value, taken out of piscina's result object. piscina's TaskInfo assigns a function
 * literal to a property in its constructor (eslint.config.js says why that matters), so the
 * settled task's promise and this result stay reachable through minor GCs until the next full one.
 * Emptied, the result keeps nothing big there: the kernel's body and the signatures die young.
 */
export function takeValue<T>(result: { value: T }): T {
  const value = result.value;
  (result as { value: T | undefined }).value = undefined;
  return value;
}

/**
 * piscina (5.x) rejects a task with plain Errors from a catalogue it does not export: no code, no
 * class, so their messages are the only mark. These two functions are the only readers of them.
 */
const PISCINA_QUEUE_FULL = 'Task queue is at limit';
const PISCINA_WORKER_EXIT = /^worker exited with code/;

/** Whether piscina refused a task because its queue is at `maxQueue`. */
export function isPiscinaQueueFull(err: unknown): boolean {
  return (err as Error | undefined)?.message === PISCINA_QUEUE_FULL;
}

/** Whether piscina failed a task because its thread exited under it. */
function isPiscinaWorkerExit(err: unknown): boolean {
  return PISCINA_WORKER_EXIT.test((err as Error | undefined)?.message ?? '');
}

/** Whether a task failed because its thread is gone (it exited, or V8 ended it at its heap cap,
 * `pool.maxOldGenerationSizeMb`): piscina starts a successor. */
export function threadLost(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY' || isPiscinaWorkerExit(err);
}

/** The 503 of a shed task, with a Retry-After of the estimated wait, never under `retryAfterS`. */
export function shedError(waitMs: number, retryAfterS: number): AppError {
  return Errors.queueFull(Math.max(retryAfterS, Math.ceil(waitMs / 1000)));
}

/** A task the worker ran and reported failed (a kernel's own error). */
export function taskFailed(kind: string, result: Extract<TaskResult<unknown>, { ok: false }>, log: Logger): AppError {
  log.error({ task: kind, code: result.error.code, msg: result.error.msg }, 'worker task failed');
  return Errors.internal(new Error(`${result.error.code}: ${result.error.msg}`));
}

/** A task piscina rejected: its queue was full, or the thread crashed. */
export function classify(err: unknown, retryAfterS: number, log: Logger): AppError {
  const e = err as Error;
  if (isPiscinaQueueFull(e)) return Errors.queueFull(retryAfterS);
  log.error({ err: e }, 'worker task crashed');
  return Errors.internal(e);
}
