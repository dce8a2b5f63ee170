/**
 * How long each kind of task holds a kernel thread, as the main thread sees it (dispatch to
 * result), not only the run the worker reports: under load the round trip and a busy loop add to
 * it, and only the observed figure keeps admitted work inside its deadline.
 */
import type { Task } from '../lib/tasks.js';

/** Until a kind of task has run once its cost is unknown: assumed heavy enough to queue few. */
const DEFAULT_EXPECTED_MS = 50;
/** Weight of the newest observation in the moving averages. */
const EWMA_ALPHA = 0.2;

/** The estimates' key of a task: its kernel id, or its kind. */
export function taskKey(task: Task): string {
  return task.kind === 'kernel' ? `kernel:${task.id}` : task.kind;
}

/** Per task key: a moving average of the time a task holds a thread, and of its deviation. */
export class TaskEstimates {
  private readonly byKey = new Map<string, { mean: number; dev: number }>();

  /** Mean and upper estimate (mean + 2 deviations) of how long a task of this key holds a thread. */
  expected(key: string): { mean: number; upper: number } {
    const known = this.byKey.get(key);
    if (known !== undefined) return { mean: known.mean, upper: known.mean + 2 * known.dev };
    return { mean: DEFAULT_EXPECTED_MS, upper: DEFAULT_EXPECTED_MS };
  }

  learn(key: string, ms: number): void {
    const prev = this.byKey.get(key);
    if (!prev) {
      this.byKey.set(key, { mean: ms, dev: 0 });
      return;
    }
    prev.dev = prev.dev * (1 - EWMA_ALPHA) + Math.abs(ms - prev.mean) * EWMA_ALPHA;
    prev.mean = prev.mean * (1 - EWMA_ALPHA) + ms * EWMA_ALPHA;
  }
}
