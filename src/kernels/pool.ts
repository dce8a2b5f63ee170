/**
 * The one Piscina pool: fixed size, explicit numeric maxQueue, a deadline on every task (queue
 * wait included) and an abort when the client goes away. Failures come back as AppErrors:
 * queue full → 503 + Retry-After, deadline → 504, a crashed worker → 500 (piscina replaces it).
 */
import type { KeyObject } from 'node:crypto';
import { Piscina } from 'piscina';
import type { Config } from '../config/schema.js';
import { AppError, Errors } from '../http/errors.js';
import type { Logger } from '../observability/logger.js';
import type { PoolSnapshot } from '../observability/metrics.js';
import type { Task, TaskResult, TaskStats } from '../../workers/tasks.js';

export interface RunOptions {
  /** Aborts when the client disconnects. */
  signal?: AbortSignal;
  /** Overrides the configured deadline (ms), queue wait included. */
  deadlineMs?: number;
}

export interface RunOutcome<T> {
  value: T;
  stats: TaskStats;
  /** Time from submission to the start of the run, as seen from the main thread. */
  waitMs: number;
}

export interface PoolState {
  threads: number;
  queueSize: number;
  /** Share of threads running a task right now (piscina's own figure costs ~0.3 ms to read). */
  busy: number;
  completed: number;
  maxQueue: number;
  crashes: number;
}

function workerEntry(): URL {
  // tsx runs the .ts sources directly (tests, dev); the build runs dist/workers/host.js
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`../../workers/host.${ext}`, import.meta.url);
}

export class WorkerPool {
  private readonly pool: Piscina;
  private crashes = 0;
  /** Tasks submitted and not yet settled. Piscina 5.3.2 puts abortable tasks in a side queue that
   * its maxQueue never counts, so the bound (threads running + maxQueue waiting) is enforced here. */
  private inFlight = 0;

  constructor(
    private readonly cfg: Config['pool'],
    readonly threads: number,
    private readonly log: Logger,
    signingKey?: KeyObject,
  ) {
    this.pool = new Piscina({
      filename: workerEntry().href,
      minThreads: threads,
      maxThreads: threads,
      maxQueue: cfg.maxQueue,
      idleTimeout: cfg.idleTimeoutMs,
      concurrentTasksPerWorker: 1,
      resourceLimits: { maxOldGenerationSizeMb: cfg.maxOldGenerationSizeMb },
      workerData: { diagnostics: cfg.diagnostics, signingKey },
    });
    // an error outside a task (e.g. a worker dying between tasks) must never crash the process
    this.pool.on('error', (err: Error) => {
      this.crashes++;
      this.log.error({ err }, 'worker pool error');
    });
  }

  async run<T = string>(task: Task, opts: RunOptions = {}): Promise<RunOutcome<T>> {
    if (this.inFlight >= this.threads + this.cfg.maxQueue) throw Errors.queueFull(this.cfg.retryAfterS);
    const budget = opts.deadlineMs ?? this.cfg.taskDeadlineMs;
    const deadline = AbortSignal.timeout(budget);
    const signal = opts.signal ? AbortSignal.any([deadline, opts.signal]) : deadline;
    const started = performance.now();
    let result: TaskResult<T>;
    this.inFlight++;
    try {
      result = (await this.pool.run(task, { signal })) as TaskResult<T>;
    } catch (err) {
      throw this.classify(err, deadline, opts.signal, budget);
    } finally {
      this.inFlight--;
    }
    const elapsed = performance.now() - started;
    if (!result.ok) {
      this.log.error({ task: task.kind, code: result.error.code, msg: result.error.msg }, 'worker task failed');
      throw Errors.internal(new Error(`${result.error.code}: ${result.error.msg}`));
    }
    return { value: result.value, stats: result.stats, waitMs: Math.max(0, elapsed - result.stats.runMs) };
  }

  private classify(err: unknown, deadline: AbortSignal, client: AbortSignal | undefined, budget: number): AppError {
    const e = err as Error;
    if (e?.message === 'Task queue is at limit') return Errors.queueFull(this.cfg.retryAfterS);
    if (e?.name === 'AbortError' || deadline.aborted || client?.aborted) {
      if (deadline.aborted) return Errors.deadline(budget);
      return Errors.clientClosed();
    }
    if (/worker exited with code/.test(e?.message ?? '')) this.crashes++;
    this.log.error({ err: e }, 'worker task crashed');
    return Errors.internal(e);
  }

  /** Cheap counters, safe on hot paths such as /health. */
  snapshot(): PoolState {
    return {
      threads: this.pool.threads.length,
      queueSize: Math.max(0, this.inFlight - this.threads),
      busy: Math.min(this.inFlight, this.threads) / Math.max(1, this.threads),
      completed: this.pool.completed,
      maxQueue: this.cfg.maxQueue,
      crashes: this.crashes,
    };
  }

  /** Counters plus piscina's utilisation and latency percentiles: piscina summarises its
   * histograms on every read (~0.3–0.5 ms each), so this is for the metrics scrape only. */
  detailedSnapshot(): PoolSnapshot {
    const h = this.pool.histogram;
    return { ...this.snapshot(), utilization: this.pool.utilization, waitP99Ms: h.waitTime?.p99 ?? 0, runP99Ms: h.runTime?.p99 ?? 0 };
  }

  /** Finishes running tasks, then stops the threads. */
  async close(): Promise<void> {
    await this.pool.close({ force: false });
  }

  async destroy(): Promise<void> {
    await this.pool.destroy();
  }
}
