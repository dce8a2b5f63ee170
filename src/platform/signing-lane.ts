/**
 * The signing lane: its own threads, so receipts never queue behind kernels. A signature is tiny:
 * it is never aborted for a gone client, only at its deadline.
 */
import type { Piscina } from 'piscina';
import type { Config } from '../config/schema.js';
import { Errors } from '../http/errors.js';
import type { Task, TaskResult } from '../lib/tasks.js';
import type { Logger } from '../observability/logger.js';
import type { RunOptions, RunOutcome } from './pool-job.js';
import type { PoolCounters } from './pool-metrics.js';
import { classify, shedError, taskFailed, takeValue } from './task-results.js';

export class SigningLane {
  private inFlight = 0;
  /** Settles once every signing thread has booted. */
  readonly ready: Promise<void>;
  booted = false;

  /** Out of reach of reflection: its options hold the signing key. */
  readonly #pool: Piscina;

  constructor(
    pool: Piscina,
    private readonly cfg: Config['pool'],
    private readonly log: Logger,
    private readonly counters: PoolCounters,
  ) {
    this.#pool = pool;
    // a thread's boot is not a task's run: deadlines start once the lane has booted
    const task: Task = { kind: 'sign', paes: [] };
    this.ready = Promise.all(Array.from({ length: cfg.signThreads }, () => pool.run(task).catch(() => undefined))).then(() => {
      this.booted = true;
    });
  }

  async run<T>(task: Task, opts: RunOptions): Promise<RunOutcome<T>> {
    if (this.inFlight >= this.cfg.signThreads + this.cfg.maxQueue) {
      this.counters.shed++;
      throw shedError(0, this.cfg.retryAfterS);
    }
    if (!this.booted) await this.ready;
    const budget = opts.deadlineMs ?? this.cfg.taskDeadlineMs;
    // a timer cleared when the task ends: AbortSignal.timeout's would fire for every batch, long
    // after it was answered, and build an AbortError each time
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), budget);
    const started = performance.now();
    let result: TaskResult<T>;
    this.inFlight++;
    try {
      result = (await this.#pool.run(task, { signal: deadline.signal })) as TaskResult<T>;
    } catch (err) {
      this.counters.noteLost(err);
      throw deadline.signal.aborted ? Errors.deadline(budget) : classify(err, this.cfg.retryAfterS, this.log);
    } finally {
      clearTimeout(timer);
      this.inFlight--;
    }
    if (!result.ok) throw taskFailed(task.kind, result, this.log);
    return { value: takeValue(result), stats: result.stats, waitMs: Math.max(0, performance.now() - started - result.stats.runMs) };
  }
}
