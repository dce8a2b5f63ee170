/**
 * The kernel lane: admission, the queue on the main thread, dispatch to the kernel threads and
 * what a finished task answers.
 */
import type { Piscina } from 'piscina';
import type { Config } from '../config/schema.js';
import { Errors } from '../http/errors.js';
import type { Task, TaskResult } from '../lib/tasks.js';
import type { Logger } from '../observability/logger.js';
import type { KernelWarmup } from './kernel-warmup.js';
import { Job, KillSwitch, type RunOptions, type RunOutcome } from './pool-job.js';
import type { PoolCounters } from './pool-metrics.js';
import { TaskEstimates, taskKey } from './task-estimates.js';
import { classify, shedError, taskFailed, takeValue } from './task-results.js';

/** Share of a task's deadline its estimated wait and run may use at admission. */
const ADMIT_SHARE = 0.8;

/**
 * Admission: a task starts at once on a free thread; otherwise it waits only if the estimated wait
 * plus its own run (with a margin for its spread) fits in its deadline, else it is shed at once
 * with 503 and a `Retry-After` of that wait. `pool.maxQueue` stays a hard cap.
 *
 * A queued task is checked again when a thread frees, and shed then if its deadline no longer fits
 * its run; one that waits past its deadline leaves the queue without costing a thread.
 *
 * A running task is answered 504 at its deadline; only one still running `pool.killGraceMs` later
 * is terminated (its thread replaced), so a runaway kernel cannot hold a thread for ever.
 */
export class KernelLane {
  private readonly queue: Job[] = [];
  private readonly running = new Set<Job>();
  private readonly estimates = new TaskEstimates();

  constructor(
    private readonly pool: Piscina,
    private readonly threads: number,
    private readonly cfg: Config['pool'],
    private readonly log: Logger,
    private readonly counters: PoolCounters,
    private readonly warmup: KernelWarmup,
  ) {}

  get queued(): number {
    return this.queue.length;
  }

  get runningCount(): number {
    return this.running.size;
  }

  /** Milliseconds until a task submitted now would start: queued and remaining running work over the threads. */
  estimatedWaitMs(now = performance.now()): number {
    let work = 0;
    for (const j of this.running) {
      const killAt = j.deadlineAt + this.cfg.killGraceMs;
      work += Math.max(0, Math.min(j.startedAt + j.expectedMs, killAt) - now);
    }
    for (const j of this.queue) work += j.expectedMs;
    return work / Math.max(1, this.threads);
  }

  private shed(waitMs: number): never {
    this.counters.shed++;
    throw shedError(waitMs, this.cfg.retryAfterS);
  }

  async run<T>(task: Task, opts: RunOptions): Promise<RunOutcome<T>> {
    if (!this.warmup.booted) await this.warmup.ready;
    const budget = opts.deadlineMs ?? this.cfg.taskDeadlineMs;
    const key = taskKey(task);
    const { mean: expectedMs, upper: upperMs } = this.estimates.expected(key);
    const now = performance.now();
    const waits = this.running.size >= this.threads;
    if (waits) {
      if (this.queue.length >= this.cfg.maxQueue) this.shed(this.estimatedWaitMs(now));
      const waitMs = this.estimatedWaitMs(now);
      // 20 % of the budget is kept for dispatch and scheduling jitter: admitted work should finish
      if (waitMs + upperMs > budget * ADMIT_SHARE) this.shed(waitMs);
    }
    if (opts.signal?.aborted || opts.departure?.departed) throw Errors.clientClosed();
    return new Promise<RunOutcome<T>>((resolve, reject) => {
      const job = new Job(task, key, expectedMs, upperMs, waits, budget, now, resolve as (v: RunOutcome<unknown>) => void, reject, this.leaveQueue);
      job.watch(opts);
      this.queue.push(job);
      this.dispatch();
    });
  }

  private readonly leaveQueue = (job: Job): void => {
    const i = this.queue.indexOf(job);
    if (i >= 0) this.queue.splice(i, 1);
  };

  private dispatch(): void {
    while (this.running.size < this.threads && this.queue.length) {
      const job = this.queue[0]!;
      if (job.settled) {
        this.queue.shift();
        continue;
      }
      const now = performance.now();
      // admitted on an estimate that an earlier task overran: it would be answered 504 after
      // holding a thread for nothing, so it is shed now, before any work, like at admission
      if (job.waits && now + job.expectedMs > job.deadlineAt) {
        this.counters.shedLate++;
        this.counters.shed++;
        job.fail(shedError(this.estimatedWaitMs(now), this.cfg.retryAfterS));
        continue;
      }
      this.queue.shift();
      this.start(job);
    }
  }

  private start(job: Job): void {
    job.startedAt = performance.now();
    this.running.add(job);
    const kill = new KillSwitch();
    const killTimer = setTimeout(() => kill.abort(), Math.max(0, job.deadlineAt + this.cfg.killGraceMs - job.startedAt));
    this.pool.run(job.task, { signal: kill }).then(
      (result: TaskResult<unknown>) => this.finish(job, killTimer, result, null, kill),
      (err: unknown) => this.finish(job, killTimer, null, err, kill),
    );
  }

  private finish(job: Job, killTimer: NodeJS.Timeout, result: TaskResult<unknown> | null, err: unknown, kill: KillSwitch): void {
    clearTimeout(killTimer);
    this.running.delete(job);
    const elapsed = performance.now() - job.startedAt;
    // the thread was held from dispatch to now, whatever the worker's own clock says
    if (result) this.estimates.learn(job.key, elapsed);
    else if (kill.aborted) {
      this.counters.killed++;
      this.estimates.learn(job.key, elapsed);
      this.warmup.rewarm();
    } else if (this.counters.noteLost(err)) this.warmup.rewarm();
    this.dispatch();
    if (job.settled) return; // answered already (deadline or disconnect): the result is dropped
    job.settled = true;
    job.cleanup();
    if (err) {
      job.reject(kill.aborted ? Errors.deadline(job.budget) : classify(err, this.cfg.retryAfterS, this.log));
      return;
    }
    if (!result!.ok) {
      job.reject(taskFailed(job.task.kind, result!, this.log));
      return;
    }
    job.resolve({ value: takeValue(result!), stats: result!.stats, waitMs: Math.max(0, job.startedAt - job.enqueuedAt) });
  }

  /** Resolves once no kernel task is running or queued (tests, shutdown). */
  async idle(pollMs = 10): Promise<void> {
    while (this.running.size || this.queue.length) await new Promise((r) => setTimeout(r, pollMs));
  }
}
