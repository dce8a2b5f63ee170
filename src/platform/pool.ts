/**
 * The worker pool the app holds: a fixed kernel lane behind an admission queue on the main thread,
 * and a separate small signing lane, so a kernel flood never delays a receipt. Every task has a
 * deadline (queue wait included); failures come back as AppErrors: queue full → 503 + Retry-After,
 * deadline → 504, a crashed worker → 500 (piscina replaces it).
 *
 * The parts, one role each: pool-threads.ts (the Piscina pools), kernel-lane.ts (admission,
 * dispatch), pool-job.ts (a task's deadline and its caller going away), task-estimates.ts,
 * kernel-warmup.ts, signing-lane.ts, task-results.ts (errors) and pool-metrics.ts (counters).
 */
import type { KeyObject } from 'node:crypto';
import type { Piscina } from 'piscina';
import type { Config } from '../config/schema.js';
import type { Task } from '../lib/tasks.js';
import type { Logger } from '../observability/logger.js';
import type { PoolSnapshot } from '../observability/metrics.js';
import { KernelLane } from './kernel-lane.js';
import { KernelWarmup, type WarmupReport } from './kernel-warmup.js';
import type { RunOptions, RunOutcome } from './pool-job.js';
import { detailedPoolState, PoolCounters, poolState, type PoolState } from './pool-metrics.js';
import { startThreads, threadIds, type PoolOptions } from './pool-threads.js';
import { SigningLane } from './signing-lane.js';

export type { RunOptions, RunOutcome } from './pool-job.js';
export type { PoolState } from './pool-metrics.js';
export type { PoolOptions } from './pool-threads.js';
export type { WarmupReport } from './kernel-warmup.js';

export class WorkerPool {
  private readonly pool: Piscina;
  /** Out of reach of reflection: its options hold the signing key, and the pool is on every plugin's Services. */
  readonly #signPool: Piscina;
  private readonly counters = new PoolCounters();
  private readonly warm: KernelWarmup;
  private readonly kernels: KernelLane;
  private readonly signing: SigningLane;

  constructor(
    private readonly cfg: Config['pool'],
    readonly threads: number,
    private readonly log: Logger,
    signingKey?: KeyObject,
    opts: PoolOptions = {},
  ) {
    ({ kernels: this.pool, signing: this.#signPool } = startThreads(cfg, threads, signingKey, opts));
    this.warm = new KernelWarmup(this.pool, threads, cfg.warmup);
    this.signing = new SigningLane(this.#signPool, cfg, log, this.counters);
    this.kernels = new KernelLane(this.pool, threads, cfg, log, this.counters, this.warm);
    // an error outside a task (e.g. a worker dying between tasks) must never crash the process
    for (const p of [this.pool, this.#signPool]) {
      p.on('error', (err: Error) => {
        this.counters.crashes++;
        this.log.error({ err }, 'worker pool error');
      });
    }
  }

  /** Running tasks past their deadline + grace, terminated (their threads replaced). */
  get killed(): number {
    return this.counters.killed;
  }

  /** Tasks refused at admission or, later, at dispatch. */
  get shed(): number {
    return this.counters.shed;
  }

  /** Of those, tasks shed at dispatch: admitted, but their deadline no longer fit their run. */
  get shedLate(): number {
    return this.counters.shedLate;
  }

  /** Resolves once every thread of both lanes has booted (kernel threads warmed up, with pool.warmup). */
  ready(): Promise<void> {
    return Promise.all([this.warm.ready, this.signing.ready]).then(() => undefined);
  }

  /** Whether the pool has finished starting (every kernel thread answered, warmed up if configured). */
  get started(): boolean {
    return this.warm.startedUp && this.signing.booted;
  }

  /** Warm-up as each live kernel thread reported it (threads not heard from yet are left out). */
  warmup(): WarmupReport {
    return this.warm.report();
  }

  /** Milliseconds until a kernel task submitted now would start. */
  estimatedWaitMs(now = performance.now()): number {
    return this.kernels.estimatedWaitMs(now);
  }

  /** Runs `task` in its lane: signatures (and signing-lane checks) in the signing lane, the rest in the kernel lane. */
  run<T = string>(task: Task, opts: RunOptions = {}): Promise<RunOutcome<T>> {
    if (task.kind === 'sign' || task.kind === 'receipts' || (task.kind === 'verify' && opts.lane === 'signing')) return this.signing.run<T>(task, opts);
    return this.kernels.run<T>(task, opts);
  }

  /** Thread ids of the kernel pool's workers: a replaced (killed) worker shows as a new id. */
  threadIds(): number[] {
    return threadIds(this.pool);
  }

  /** Resolves once no kernel task is running or queued (tests, shutdown). */
  idle(pollMs = 10): Promise<void> {
    return this.kernels.idle(pollMs);
  }

  /** Cheap counters, safe on hot paths such as /health. */
  snapshot(): PoolState {
    return poolState(this.pool, this.kernels, this.threads, this.cfg.maxQueue, this.counters);
  }

  /** Counters plus piscina's utilisation and latency percentiles, for the metrics scrape only. */
  detailedSnapshot(): PoolSnapshot {
    return detailedPoolState(this.pool, this.snapshot(), this.counters);
  }

  /** Finishes running tasks, then stops the threads. */
  async close(): Promise<void> {
    this.warm.stop();
    await Promise.all([this.pool.close({ force: false }), this.#signPool.close({ force: false })]);
  }

  async destroy(): Promise<void> {
    this.warm.stop();
    await Promise.all([this.pool.destroy(), this.#signPool.destroy()]);
  }
}
